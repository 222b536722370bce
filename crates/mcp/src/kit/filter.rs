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

impl ToolFilter {
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
                "tool {name} is disabled on this server (--tools / --exclude-tools / DESKPILOT_TOOLS); available: {}",
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
}
