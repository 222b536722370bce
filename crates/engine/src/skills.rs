//! App skills as the engine serves them: reads straight from the library, writes as mutating
//! actions of a session (kill switch, policy, blocklist, approval and dry run, in that order,
//! before the disk is touched), and the hint line for the window in front.

use deskpilot_skills::{Library, Skill, Written};

use crate::action::{Effect, Outcome, Route};
use crate::{error::Error, safety::Mutation, session::Session};

/// What a skill write did, read back from the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillWrite {
    pub action: &'static str,
    pub written: Written,
    /// The file on disk holds exactly what was written (or is gone, for remove).
    pub read_back: bool,
}

impl Outcome for SkillWrite {
    fn route(&self) -> Route {
        Route::File
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        Some(if self.read_back {
            (Effect::Confirmed, "the skill file read back")
        } else {
            (Effect::SuspectedNoop, "the skill file read back")
        })
    }
}

impl crate::engine::Engine {
    /// The skill library.
    pub fn skills(&self) -> &Library {
        &self.skills
    }

    /// The hint line for a window, when its app has a skill and hints are on.
    pub fn skill_hint(&self, window: &deskpilot_types::WindowInfo) -> Option<(Skill, String)> {
        if self.config().skills.no_hint || !self.skills.enabled() {
            return None;
        }
        let skill =
            self.skills
                .for_window(window.process.as_deref(), &window.class, &window.title)?;
        let hint = skill.hint();
        Some((skill, hint))
    }
}

impl Session {
    /// `app_skill save`.
    pub fn skill_save(
        &self,
        app: &str,
        content: &str,
        summary: &str,
        matches: &[String],
        overwrite: bool,
    ) -> Result<SkillWrite, Error> {
        self.gate(
            Mutation::Other,
            &format!("save app skill \"{}\"", app.trim()),
        )?;
        let written = self
            .skills
            .save(app, content, summary, matches, overwrite)?;
        let read_back = self
            .skills
            .get(app)
            .is_some_and(|s| s.body == content.trim_end())
            && written.path.is_file();
        Ok(SkillWrite {
            action: "save",
            written,
            read_back,
        })
    }

    /// `app_skill append`.
    pub fn skill_append(&self, app: &str, content: &str) -> Result<SkillWrite, Error> {
        self.gate(
            Mutation::Other,
            &format!("append to app skill \"{}\"", app.trim()),
        )?;
        let written = self.skills.append(app, content)?;
        let read_back = std::fs::read_to_string(&written.path)
            .is_ok_and(|t| t.trim_end().ends_with(content.trim_end()));
        Ok(SkillWrite {
            action: "append",
            written,
            read_back,
        })
    }

    /// `app_skill remove`.
    pub fn skill_remove(&self, app: &str) -> Result<SkillWrite, Error> {
        self.gate(
            Mutation::Other,
            &format!("remove app skill \"{}\"", app.trim()),
        )?;
        let written = self.skills.remove(app)?;
        let read_back = !written.path.exists();
        Ok(SkillWrite {
            action: "remove",
            written,
            read_back,
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::config::EngineConfig;

    fn session(dir: &std::path::Path, dry_run: bool) -> (FakeDesktop, Session) {
        let fake = FakeDesktop::new(800, 600);
        let mut config = EngineConfig::default();
        config.skills.library.dir = Some(dir.to_path_buf());
        config.safety.dry_run = dry_run;
        let s = Session::standalone(fake.desktop(), config);
        (fake, s)
    }

    #[test]
    fn writes_pass_the_gates_and_a_dry_run_touches_nothing() {
        let dir =
            std::env::temp_dir().join(format!("deskpilot-engine-skills-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (_, dry) = session(&dir, true);
        let e = dry
            .skill_save("Calc", "- ctrl+shift+t: name box", "", &[], false)
            .unwrap_err();
        assert!(matches!(e, Error::DryRun { .. }), "{e}");
        assert!(!dir.join("calc.md").exists());

        let (fake, s) = session(&dir, false);
        let w = s
            .skill_save("Calc", "- ctrl+shift+t: name box", "cells", &[], false)
            .unwrap();
        assert!(w.read_back && w.judged().unwrap().0 == Effect::Confirmed);
        assert_eq!(
            s.skill_save("calc", "x", "", &[], false)
                .unwrap_err()
                .code(),
            ErrorCode::SkillExists
        );
        assert_eq!(
            s.skill_remove("Excel").unwrap_err().code(),
            ErrorCode::SkillBuiltin
        );
        let long = "z".repeat(4000);
        assert_eq!(
            s.skill_append("calc", &long).unwrap_err().code(),
            ErrorCode::SkillTooLong
        );
        // The window in front gets the hint; a blocklisted label is refused.
        fake.add_window(FakeWindow::new("Calc - sheet1", Rect::new(0, 0, 300, 200)));
        let w = s.list_windows(&Default::default()).unwrap().remove(0);
        let (_, hint) = s.skill_hint(&w).unwrap();
        assert!(
            hint.contains("App skill available for Calc (cells)"),
            "{hint}"
        );
        assert!(s.skill_remove("calc").unwrap().read_back);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
