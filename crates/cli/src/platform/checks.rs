//! The checks of `deskpilot doctor` that Linux and Windows share: the OCR engine as the server
//! starts it, and its languages.

use deskpilot_backend::Check;

/// The OCR engine as the server starts it (on Linux its worker process), and its languages.
pub fn ocr() -> Check {
    let worker = match std::env::current_exe() {
        Ok(exe) => vec![exe.into(), "__ocr".into()],
        Err(_) => Vec::new(),
    };
    let info = deskpilot_ocr::platform(worker).info();
    match info.languages {
        Ok(languages) => {
            let wanted = ["eng", "chi_sim"];
            let complete = wanted.iter().all(|l| languages.iter().any(|i| i == l));
            Check {
                name: "ocr",
                ok: complete,
                detail: format!(
                    "{}; languages: {}; default {}",
                    info.engine,
                    languages.join(", "),
                    info.default_languages.join("+")
                ),
                fix: if complete { None } else { info.fix },
            }
        }
        Err(why) => Check {
            name: "ocr",
            ok: false,
            detail: format!("{}: {why}", info.engine),
            fix: info.fix,
        },
    }
}
