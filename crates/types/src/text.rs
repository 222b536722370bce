//! Folding text for comparison: one rule shared by everything that compares what a person
//! typed with what the desktop shows (finding controls, reading OCR lines, recalling windows
//! and controls from memory), so a query folds the same way wherever it is matched.

/// Lower-case, full-width folded to ASCII, punctuation to spaces, spaces collapsed.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        };
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folding_lowers_widens_and_collapses() {
        assert_eq!(fold("ＳＡＶＥ！ File…"), "save file");
        assert_eq!(fold("  保存　并关闭!! "), "保存 并关闭");
        assert_eq!(fold("..."), "");
    }
}
