//! Text as AT-SPI hands it over, cleaned at the backend seam.
//!
//! Chromium (and GTK around embedded widgets) puts U+FFFC OBJECT REPLACEMENT CHARACTER into a
//! parent's text wherever a child object sits, so a group of two links reports the text
//! "\u{FFFC}\u{FFFC}". That character stands for an object, never for text: it is taken out
//! of every name, description, value and text read here, and a value left with nothing but
//! whitespace is no value. Nothing above the backend ever sees it.
//!
//! Excerpts are read within the text's length: Gecko, Qt and LibreOffice answer
//! `GetText(0, n)` with "" when `n` is past the end, so `CharacterCount` is read first.

use atspi::proxy::text::TextProxy;

/// U+FFFC OBJECT REPLACEMENT CHARACTER.
const OBJECT: char = '\u{FFFC}';

/// `text` without U+FFFC, its ends trimmed: a name or a description.
pub(super) fn clean(text: &str) -> String {
    strip(text).trim().to_string()
}

/// `text` without U+FFFC, otherwise as it was: the text of an element read in full.
pub(super) fn strip(text: &str) -> String {
    text.chars().filter(|c| *c != OBJECT).collect()
}

/// A value without U+FFFC; `None` when nothing but U+FFFC and whitespace was there.
pub(super) fn clean_value(value: Option<String>) -> Option<String> {
    let value = value?;
    if !value.contains(OBJECT) {
        return (!value.trim().is_empty()).then_some(value);
    }
    let stripped = strip(&value);
    (!stripped.trim().is_empty()).then_some(stripped)
}

/// Where an excerpt of at most `max` characters of a text `count` characters long ends;
/// `None` when the text is empty.
pub(super) fn excerpt_end(count: i32, max: i32) -> Option<i32> {
    (count > 0).then(|| count.min(max))
}

/// The first `max` characters of the element's text (as the toolkit gave them, uncleaned);
/// `None` when it has none or does not answer.
pub(super) async fn excerpt(t: &TextProxy<'_>, max: i32) -> Option<String> {
    match t.character_count().await {
        Ok(count) => t.get_text(0, excerpt_end(count, max)?).await.ok(),
        // No count: the whole text, cut here.
        Err(_) => {
            let all = t.get_text(0, -1).await.ok()?;
            Some(all.chars().take(max.max(0) as usize).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 22): Chromium groups printed `value="￼￼"`.
    #[test]
    fn object_replacement_characters_are_never_text() {
        // (what AT-SPI said, the value kept)
        let values: &[(&str, Option<&str>)] = &[
            ("\u{FFFC}\u{FFFC}", None),
            (" \u{FFFC} \n\u{FFFC}\t", None),
            ("", None),
            ("   ", None),
            ("Read \u{FFFC}the docs\u{FFFC}", Some("Read the docs")),
            ("  spaced  ", Some("  spaced  ")),
            ("保存\u{FFFC}文件", Some("保存文件")),
        ];
        for (raw, want) in values {
            assert_eq!(
                clean_value(Some(raw.to_string())).as_deref(),
                *want,
                "value {raw:?}"
            );
        }
        assert_eq!(clean_value(None), None);
        assert_eq!(clean("\u{FFFC} Retain cycles \u{FFFC}"), "Retain cycles");
        assert_eq!(clean("\u{FFFC}\u{FFFC}"), "");
        assert_eq!(strip("a\u{FFFC}\nb "), "a\nb ");
    }

    /// Regression: Firefox, Qt and LibreOffice answered `GetText(0, 200)` with "" for a
    /// 5-character text (a status bar field "Sheet 1 of 1" came out empty).
    #[test]
    fn excerpts_end_within_the_text() {
        assert_eq!(excerpt_end(12, 200), Some(12));
        assert_eq!(excerpt_end(5000, 200), Some(200));
        assert_eq!(excerpt_end(0, 200), None);
        assert_eq!(excerpt_end(-1, 200), None);
    }
}
