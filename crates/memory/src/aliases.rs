//! App names and their aliases: "微信" finds a window whose process is `wechat`, "终端" an
//! `xterm`. A small built-in table, extendable from configuration; every term of a group
//! stands for every other.
//!
//! Matching is on folded text (lower case, full-width forms narrowed). A Latin term matches a
//! whole Latin word of the query ("edge" is not found in "knowledge", "wechat" is in "打开wechat");
//! a CJK term matches anywhere, since Chinese has no spaces between words.

use deskpilot_types::fold;

/// The built-in groups: each row names one app several ways.
pub const DEFAULT_ALIASES: &[&[&str]] = &[
    &["微信", "wechat", "weixin"],
    &["钉钉", "dingtalk"],
    &["记事本", "notepad", "mousepad", "gedit"],
    &["终端", "terminal", "xterm", "konsole", "gnome-terminal"],
    &[
        "浏览器",
        "browser",
        "chromium",
        "chrome",
        "edge",
        "msedge",
        "firefox",
    ],
    &["计算器", "calculator", "kcalc", "calc", "gnome-calculator"],
    &[
        "文件管理器",
        "file manager",
        "explorer",
        "thunar",
        "nautilus",
    ],
];

/// The alias table in use: the built-in groups plus any from configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aliases {
    groups: Vec<Vec<String>>,
}

impl Default for Aliases {
    fn default() -> Self {
        Aliases {
            groups: DEFAULT_ALIASES
                .iter()
                .map(|g| g.iter().map(|t| fold(t)).collect())
                .collect(),
        }
    }
}

/// A group the query named: which term it said, and every name the app goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasHit<'a> {
    pub said: &'a str,
    pub terms: &'a [String],
}

fn is_cjk_term(t: &str) -> bool {
    !t.is_ascii()
}

/// Whether folded `hay` holds term `t`: anywhere for CJK terms, as whole words for Latin ones.
pub(super) fn holds(hay: &str, t: &str) -> bool {
    if t.is_empty() {
        return false;
    }
    if is_cjk_term(t) {
        return hay.contains(t);
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    hay.match_indices(t).any(|(at, _)| {
        !word(hay[..at].chars().next_back()) && !word(hay[at + t.len()..].chars().next())
    })
}

impl Aliases {
    /// Adds a group from configuration (e.g. `["飞书", "feishu", "lark"]`); a group that shares a
    /// term with an existing one is merged into it.
    pub fn extend<S: AsRef<str>>(&mut self, group: &[S]) {
        let terms: Vec<String> = group
            .iter()
            .map(|t| fold(t.as_ref()))
            .filter(|t| !t.is_empty())
            .collect();
        if terms.is_empty() {
            return;
        }
        if let Some(g) = self
            .groups
            .iter_mut()
            .find(|g| g.iter().any(|t| terms.contains(t)))
        {
            for t in terms {
                if !g.contains(&t) {
                    g.push(t);
                }
            }
        } else {
            self.groups.push(terms);
        }
    }

    /// Every group the (folded) query names, with the term it used.
    pub fn hits<'a>(&'a self, folded_query: &str) -> Vec<AliasHit<'a>> {
        self.groups
            .iter()
            .filter_map(|g| {
                g.iter()
                    .find(|t| holds(folded_query, t))
                    .map(|said| AliasHit {
                        said,
                        terms: g.as_slice(),
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_finds_its_group() {
        let a = Aliases::default();
        let cases: &[(&str, &str, &str)] = &[
            ("微信", "微信", "wechat"),
            ("打开WeChat", "wechat", "微信"),
            ("钉钉的窗口", "钉钉", "dingtalk"),
            ("记事本", "记事本", "notepad"),
            ("Notepad", "notepad", "记事本"),
            ("终端", "终端", "xterm"),
            ("the xterm", "xterm", "terminal"),
            ("浏览器", "浏览器", "chromium"),
            ("Edge browser", "browser", "edge"),
            ("计算器", "计算器", "kcalc"),
            ("kcalc", "kcalc", "calculator"),
            ("文件管理器", "文件管理器", "thunar"),
            ("Explorer", "explorer", "文件管理器"),
        ];
        for (query, said, also) in cases {
            let hits = a.hits(&fold(query));
            assert_eq!(hits.len(), 1, "{query}: {hits:?}");
            assert_eq!(hits[0].said, *said, "{query}");
            assert!(hits[0].terms.iter().any(|t| t == also), "{query}");
        }
    }

    #[test]
    fn latin_terms_match_whole_words_only() {
        let a = Aliases::default();
        assert!(a.hits(&fold("knowledge base")).is_empty());
        assert!(a.hits(&fold("calculus")).is_empty());
    }

    #[test]
    fn configuration_adds_and_merges_groups() {
        let mut a = Aliases::default();
        a.extend(&["飞书", "Feishu", "Lark"]);
        a.extend(&["XTerm", "uxterm"]);
        assert_eq!(a.hits(&fold("lark"))[0].terms[0], "飞书");
        let term = &a.hits(&fold("uxterm"))[0];
        assert!(term.terms.iter().any(|t| t == "终端"));
        a.extend::<&str>(&[]);
        assert_eq!(a.groups.len(), DEFAULT_ALIASES.len() + 1);
    }
}
