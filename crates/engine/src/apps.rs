//! `list_apps` and `launch_app`: what runs now (each process with its windows) and what could
//! be started (the backend's catalog: XDG desktop entries, Start-menu shortcuts), and starting
//! one of those by id, by name in any language, by keyword, or by a program path.
//!
//! A name that fits several catalog entries equally well is refused with the candidates; no
//! app is ever guessed.

use std::time::Duration;

use deskpilot_backend::apps::InstalledApp;
use deskpilot_types::WindowInfo;

use crate::launch::LaunchOutcome;
use crate::{error::Error, session::Session};

/// A running process and its top-level windows, topmost first.
#[derive(Debug, Clone)]
pub struct RunningApp {
    pub process: Option<String>,
    pub pid: Option<u32>,
    pub windows: Vec<WindowInfo>,
}

/// What `list_apps` found.
#[derive(Debug, Clone)]
pub struct AppList {
    /// By their topmost window, topmost first.
    pub running: Vec<RunningApp>,
    /// The catalog, by name.
    pub installed: Vec<InstalledApp>,
    /// Why the catalog could not be read, when it could not (the running apps still are).
    pub catalog_error: Option<String>,
}

impl AppList {
    /// Only what `filter` names (case-insensitive, a substring): running apps by process name
    /// or window title, installed ones by name, id, localized name or keyword. Empty keeps all.
    pub fn matching(mut self, filter: &str) -> AppList {
        let needle = filter.trim().to_lowercase();
        if needle.is_empty() {
            return self;
        }
        let hit = |s: &str| s.to_lowercase().contains(&needle);
        self.running.retain(|r| {
            r.process.as_deref().is_some_and(hit) || r.windows.iter().any(|w| hit(&w.title))
        });
        self.installed.retain(|a| {
            [&a.name, &a.id]
                .into_iter()
                .chain(a.localized.values())
                .chain(&a.keywords)
                .any(|s| hit(s))
        });
        self
    }
}

/// How an app was found for `launch_app`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Id,
    Name,
    Keyword,
}

/// Groups windows by their process, in the order of each process's topmost window.
fn running(windows: Vec<WindowInfo>) -> Vec<RunningApp> {
    let mut out: Vec<RunningApp> = Vec::new();
    for w in windows {
        match out.iter_mut().find(|a| {
            a.pid.is_some() && a.pid == w.pid
                || a.pid.is_none() && w.pid.is_none() && a.process == w.process
        }) {
            Some(app) => app.windows.push(w),
            None => out.push(RunningApp {
                process: w.process.clone(),
                pid: w.pid,
                windows: vec![w],
            }),
        }
    }
    out
}

/// The catalog entries `query` names, and how: an exact id, else names (every language,
/// case-insensitive), else keywords (generic name, keywords, the program's file name).
fn matching<'a>(apps: &'a [InstalledApp], query: &str) -> (Vec<&'a InstalledApp>, Found) {
    let q = query.trim().to_lowercase();
    let id: Vec<&InstalledApp> = apps
        .iter()
        .filter(|a| {
            let id = a.id.to_lowercase();
            id == q || id.strip_suffix(".desktop") == Some(q.as_str())
        })
        .collect();
    if !id.is_empty() {
        return (id, Found::Id);
    }
    let named: Vec<&InstalledApp> = apps
        .iter()
        .filter(|a| {
            a.name.to_lowercase() == q || a.localized.values().any(|n| n.to_lowercase() == q)
        })
        .collect();
    if !named.is_empty() {
        return (named, Found::Name);
    }
    let keyword = apps
        .iter()
        .filter(|a| a.keywords.iter().any(|k| k.to_lowercase() == q))
        .collect();
    (keyword, Found::Keyword)
}

impl Session {
    /// The running apps (from one window list) and the installed ones (the backend's
    /// catalog).
    pub fn list_apps(&self) -> Result<AppList, Error> {
        self.note_call();
        let windows = self.desktop().windows.list_windows()?;
        let (installed, catalog_error) = match self.desktop().window_control.installed_apps() {
            Ok(apps) => (apps, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        Ok(AppList {
            running: running(windows),
            installed,
            catalog_error,
        })
    }

    /// The one catalog entry `query` names, and how it was found; `None` when none does.
    pub fn find_app(&self, query: &str) -> Result<Option<(InstalledApp, Found)>, Error> {
        if query.trim().is_empty() {
            return Err(Error::InvalidArgument {
                message: "app is empty: pass an id or a name from list_apps, or a program path"
                    .to_string(),
            });
        }
        let apps = self.desktop().window_control.installed_apps()?;
        let (found, how) = matching(&apps, query);
        match found.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(((*one).clone(), how))),
            many => Err(Error::InvalidArgument {
                message: format!(
                    "\"{query}\" names {} apps; pass one of their ids: {}",
                    many.len(),
                    many.iter()
                        .take(10)
                        .map(|a| format!("{} ({})", a.id, a.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    /// Starts the app `query` names (see [`Session::find_app`]), else `query` itself as a
    /// program (a path, or a name on `PATH`), and reports the windows it opened within `wait`.
    pub fn launch_app(
        &self,
        query: &str,
        wait: Duration,
    ) -> Result<(Option<(InstalledApp, Found)>, LaunchOutcome), Error> {
        match self.find_app(query)? {
            Some((app, how)) => {
                let (program, args) = app
                    .exec
                    .split_first()
                    .map(|(p, a)| (p.clone(), a.to_vec()))
                    .unwrap_or_default();
                let outcome = self.launch(&program, &args, wait)?;
                Ok((Some((app, how)), outcome))
            }
            None => {
                let outcome = self.launch(query.trim(), &[], wait).map_err(|e| match e {
                    Error::LaunchFailed { command, message } => Error::LaunchFailed {
                        message: format!(
                            "{message}; and no installed app has that id or name (list_apps lists them)"
                        ),
                        command,
                    },
                    other => other,
                })?;
                Ok((None, outcome))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::config::EngineConfig;

    fn app(
        id: &str,
        name: &str,
        zh: Option<&str>,
        exec: &[&str],
        keywords: &[&str],
    ) -> InstalledApp {
        InstalledApp {
            id: id.into(),
            name: name.into(),
            localized: zh
                .map(|z| BTreeMap::from([("zh_CN".to_string(), z.to_string())]))
                .unwrap_or_default(),
            exec: exec.iter().map(|s| s.to_string()).collect(),
            icon: None,
            keywords: keywords.iter().map(|s| s.to_string()).collect(),
            source: "test".into(),
        }
    }

    fn catalog() -> Vec<InstalledApp> {
        vec![
            app(
                "org.xfce.mousepad.desktop",
                "Mousepad",
                Some("文本编辑器"),
                &["mousepad"],
                &["Text Editor", "mousepad"],
            ),
            app(
                "xterm.desktop",
                "XTerm",
                None,
                &["xterm"],
                &["Terminal", "xterm"],
            ),
            app(
                "uxterm.desktop",
                "UXTerm",
                None,
                &["uxterm"],
                &["Terminal", "uxterm"],
            ),
            app("truth.desktop", "Truth", None, &["true"], &["true"]),
        ]
    }

    #[test]
    fn running_apps_group_windows_by_process_and_the_catalog_comes_along() {
        let fake = FakeDesktop::new(800, 600);
        fake.add_window(FakeWindow {
            pid: 10,
            process: "mousepad".into(),
            ..FakeWindow::new("a - Mousepad", Rect::new(0, 0, 100, 100))
        });
        fake.add_window(FakeWindow {
            pid: 20,
            process: "xterm".into(),
            ..FakeWindow::new("bash", Rect::new(0, 0, 100, 100))
        });
        fake.add_window(FakeWindow {
            pid: 10,
            process: "mousepad".into(),
            ..FakeWindow::new("b - Mousepad", Rect::new(0, 0, 100, 100))
        });
        fake.set_installed(catalog());
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let list = s.list_apps().unwrap();
        let running: Vec<(Option<u32>, usize)> = list
            .running
            .iter()
            .map(|a| (a.pid, a.windows.len()))
            .collect();
        assert_eq!(running, [(Some(10), 2), (Some(20), 1)]);
        assert_eq!(list.installed.len(), 4);
        assert!(list.catalog_error.is_none());
    }

    #[test]
    fn apps_are_found_by_id_name_in_any_language_or_keyword_and_never_guessed() {
        let fake = FakeDesktop::new(100, 100);
        fake.set_installed(catalog());
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let find = |q: &str| s.find_app(q).unwrap().map(|(a, how)| (a.id, how));
        assert_eq!(
            find("org.xfce.mousepad"),
            Some(("org.xfce.mousepad.desktop".into(), Found::Id))
        );
        assert_eq!(
            find("mousepad"),
            Some(("org.xfce.mousepad.desktop".into(), Found::Name))
        );
        assert_eq!(
            find("文本编辑器"),
            Some(("org.xfce.mousepad.desktop".into(), Found::Name))
        );
        assert_eq!(
            find("text editor"),
            Some(("org.xfce.mousepad.desktop".into(), Found::Keyword))
        );
        assert_eq!(find("gimp"), None);
        let e = s.find_app("terminal").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(
            e.to_string().contains("xterm.desktop") && e.to_string().contains("uxterm.desktop"),
            "{e}"
        );
    }

    #[test]
    fn launch_app_runs_the_entrys_command_or_the_program_named() {
        let fake = FakeDesktop::new(100, 100);
        fake.set_installed(catalog());
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let (found, outcome) = s.launch_app("Truth", Duration::from_millis(300)).unwrap();
        assert_eq!(found.map(|(a, _)| a.id), Some("truth.desktop".into()));
        assert!(outcome.command.starts_with("true"), "{outcome:?}");
        let e = s
            .launch_app("/nonexistent/app", Duration::from_millis(100))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::LaunchFailed);
        assert!(e.to_string().contains("list_apps"), "{e}");
    }
}
