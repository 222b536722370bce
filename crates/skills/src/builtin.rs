//! The skills that ship in the binary: dsh-computer-use's eight Windows recipes and recipes for the
//! Linux apps agents meet most (mousepad, xterm, GNOME Terminal, Thunar, Nautilus, PCManFM,
//! Chromium, Firefox, Thunderbird, GIMP, LibreOffice and its Calc, Writer and Impress), written from
//! what driving them on a virtual desktop showed.

use crate::skill::{Skill, Source, parse};

/// (file stem, text) of every built-in.
const FILES: &[(&str, &str)] = &[
    ("excel", include_str!("../builtin/excel.md")),
    ("word", include_str!("../builtin/word.md")),
    ("powerpoint", include_str!("../builtin/powerpoint.md")),
    ("chrome", include_str!("../builtin/chrome.md")),
    ("explorer", include_str!("../builtin/explorer.md")),
    ("notepad", include_str!("../builtin/notepad.md")),
    ("vscode", include_str!("../builtin/vscode.md")),
    (
        "windows_terminal",
        include_str!("../builtin/windows_terminal.md"),
    ),
    ("mousepad", include_str!("../builtin/mousepad.md")),
    ("xterm", include_str!("../builtin/xterm.md")),
    ("thunar", include_str!("../builtin/thunar.md")),
    ("chromium", include_str!("../builtin/chromium.md")),
    ("libreoffice", include_str!("../builtin/libreoffice.md")),
    (
        "libreoffice_calc",
        include_str!("../builtin/libreoffice_calc.md"),
    ),
    (
        "libreoffice_writer",
        include_str!("../builtin/libreoffice_writer.md"),
    ),
    (
        "libreoffice_impress",
        include_str!("../builtin/libreoffice_impress.md"),
    ),
    ("firefox", include_str!("../builtin/firefox.md")),
    ("thunderbird", include_str!("../builtin/thunderbird.md")),
    ("gimp", include_str!("../builtin/gimp.md")),
    ("nautilus", include_str!("../builtin/nautilus.md")),
    ("pcmanfm", include_str!("../builtin/pcmanfm.md")),
    (
        "gnome_terminal",
        include_str!("../builtin/gnome_terminal.md"),
    ),
];

/// Every built-in skill, parsed.
pub fn all() -> Vec<Skill> {
    FILES
        .iter()
        .map(|(stem, text)| parse(stem, text, Source::Builtin))
        .collect()
}
