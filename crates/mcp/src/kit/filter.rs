//! `--tools` / `--exclude-tools` (and `DESKPILOT_TOOLS` / `DESKPILOT_TOOLS_EXCLUDE`).
//!
//! Invariant: filtering removes routes from the router itself, so a hidden tool is absent
//! from `tools/list` *and* refused by `tools/call`, whatever the client cached.

use std::collections::BTreeSet;

use rmcp::handler::server::router::tool::ToolRouter;

/// Which tools a server exposes: an optional allow list, then a deny list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    only: Option<BTreeSet<String>>,
    exclude: BTreeSet<String>,
}

impl ToolFilter {
    /// Builds a filter from comma-separated lists; blanks and surrounding spaces are ignored.
    pub fn new(only: Option<&str>, exclude: Option<&str>) -> Self {
        let split = |s: &str| {
            s.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect()
        };
        ToolFilter {
            only: only.map(split).filter(|s: &BTreeSet<String>| !s.is_empty()),
            exclude: exclude.map(split).unwrap_or_default(),
        }
    }

    /// A filter that exposes no tool at all (`enabled: false`).
    pub fn none() -> Self {
        ToolFilter {
            only: Some(BTreeSet::new()),
            exclude: BTreeSet::new(),
        }
    }

    /// Whether `tool` is exposed.
    pub fn allows(&self, tool: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(tool)) && !self.exclude.contains(tool)
    }

    /// Names in the filter that match no known tool (typos the user should hear about).
    pub fn unknown_names<'a>(&'a self, known: &'a [String]) -> impl Iterator<Item = &'a str> + 'a {
        self.only
            .iter()
            .flatten()
            .chain(&self.exclude)
            .map(String::as_str)
            .filter(|n| !known.iter().any(|k| k == n))
    }
}

/// A profile's tool groups: a name and the tools it stands for.
pub type Groups = &'static [(&'static str, &'static [&'static str])];

impl ToolFilter {
    /// The same filter with every group name replaced by its tools (a name that is both a group
    /// and a tool stays a tool too).
    pub fn expand(&self, groups: Groups) -> ToolFilter {
        let expand = |set: &BTreeSet<String>| -> BTreeSet<String> {
            let mut out = BTreeSet::new();
            for name in set {
                match groups.iter().find(|(g, _)| g == name) {
                    Some((_, tools)) => out.extend(tools.iter().map(|t| t.to_string())),
                    None => {
                        out.insert(name.clone());
                    }
                }
            }
            out
        };
        ToolFilter {
            only: self.only.as_ref().map(expand),
            exclude: expand(&self.exclude),
        }
    }

    /// Names in the filter that are neither a group nor a tool of a profile that has `tools`
    /// and `groups`: a start-up error, since a typo would silently expose or hide the wrong tools.
    pub fn check(&self, tools: &[String], groups: Groups) -> Result<(), String> {
        let unknown: Vec<&str> = self
            .only
            .iter()
            .flatten()
            .chain(&self.exclude)
            .map(String::as_str)
            .filter(|n| !tools.iter().any(|t| t == n) && !groups.iter().any(|(g, _)| g == n))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        Err(format!(
            "the tool filter names {} that this profile does not have; groups: {}; tools: {}",
            unknown
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", "),
            if groups.is_empty() {
                "none".to_string()
            } else {
                groups
                    .iter()
                    .map(|(g, t)| format!("{g} ({})", t.len()))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            tools.join(", ")
        ))
    }

    /// Removes the tools this filter hides from `router`; returns it and the hidden names.
    /// Names the filter gives that the router does not have are logged.
    pub(crate) fn apply<S: Send + Sync + 'static>(
        &self,
        mut router: ToolRouter<S>,
    ) -> (ToolRouter<S>, Vec<String>) {
        let known = names(&router);
        for unknown in self.unknown_names(&known) {
            tracing::warn!(tool = unknown, known = ?known, "tool filter names a tool this profile does not have");
        }
        let hidden: Vec<String> = known.iter().filter(|n| !self.allows(n)).cloned().collect();
        for name in &hidden {
            router.remove_route(name);
        }
        (router, hidden)
    }
}

/// The tool names of `router`, sorted.
pub(crate) fn names<S: Send + Sync + 'static>(router: &ToolRouter<S>) -> Vec<String> {
    let mut names: Vec<String> = router
        .list_all()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    names.sort();
    names
}

/// A protocol error for a call to a tool the filter hid.
pub(crate) fn refuse_hidden(
    hidden: &[String],
    name: &str,
    available: impl FnOnce() -> Vec<String>,
) -> Result<(), rmcp::ErrorData> {
    if hidden.iter().any(|h| h == name) {
        return Err(rmcp::ErrorData::invalid_params(
            format!(
                "tool {name} is disabled on this server (--tools / --exclude-tools / DESKPILOT_TOOLS / DESKTOPOS_TOOLS); available: {}",
                available().join(", ")
            ),
            None,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_then_deny_list() {
        let f = ToolFilter::new(Some(" screenshot, status ,"), Some("status"));
        assert!(f.allows("screenshot"));
        assert!(!f.allows("status"));
        assert!(!f.allows("list_windows"));
        let all = ToolFilter::new(Some(""), None);
        assert!(
            all.allows("list_windows"),
            "an empty allow list means no allow list"
        );
        let known = vec!["screenshot".to_string(), "status".to_string()];
        let typo = ToolFilter::new(Some("screenshto"), None);
        assert_eq!(
            typo.unknown_names(&known).collect::<Vec<_>>(),
            ["screenshto"]
        );
    }

    #[test]
    fn groups_expand_mixed_with_names_and_exclude_wins() {
        const GROUPS: Groups = &[("shell", &["shell_exec", "shell_cd"]), ("desk", &["click"])];
        let known: Vec<String> = ["shell_exec", "shell_cd", "click", "screenshot"]
            .map(String::from)
            .to_vec();
        let f = ToolFilter::new(Some("shell,screenshot"), Some("shell_cd")).expand(GROUPS);
        let allowed: Vec<&String> = known.iter().filter(|t| f.allows(t)).collect();
        assert_eq!(allowed, ["shell_exec", "screenshot"]);
        let f = ToolFilter::new(None, Some("desk")).expand(GROUPS);
        assert!(!f.allows("click") && f.allows("shell_cd"));
        assert!(
            ToolFilter::new(Some("shell,click"), None)
                .check(&known, GROUPS)
                .is_ok()
        );
        let e = ToolFilter::new(Some("shel"), Some("clik"))
            .check(&known, GROUPS)
            .unwrap_err();
        assert!(
            e.contains("\"shel\", \"clik\"") && e.contains("groups: shell (2), desk (1)"),
            "{e}"
        );
    }
}
