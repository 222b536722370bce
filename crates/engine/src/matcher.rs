//! Comparing texts: folding (case, full-width forms, punctuation), whole-word containment,
//! CJK bigrams, and matching text as OCR reads it (spaces inside words and digit runs,
//! `0`/`O`, `1`/`l`/`I`), always below an exact match. Used by `find` (ranking elements and
//! OCR lines) and `ocr` (finding a text among read lines, `wait_for text`); it imports
//! nothing of the crate.

/// The one folding rule, shared with memory's recall (it lives in `deskpilot_types`).
pub use deskpilot_types::fold;

/// [`fold`], then as OCR reads text: without spaces (it splits "9271" into "927 1" and joins
/// words), and with look-alikes made one (`o` → `0`; `l`, `i` → `1`). Only for comparing.
pub fn ocr_fold(s: &str) -> String {
    fold(s)
        .chars()
        .filter(|c| *c != ' ')
        .map(|c| match c {
            'o' => '0',
            'l' | 'i' => '1',
            c => c,
        })
        .collect()
}

/// How a text matched a wanted text: better is greater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TextMatch {
    /// Only as OCR reads text ([`ocr_fold`]).
    Tolerant,
    /// The folded text contains the folded needle.
    Exact,
}

/// Shortest needle (characters after [`ocr_fold`]) matched tolerantly: shorter ones match
/// too much once spaces and look-alikes no longer count.
pub(crate) const MIN_TOLERANT: usize = 3;

/// Whether `text` (read by OCR) contains `needle`, and how: [`TextMatch::Exact`] when the
/// folded text contains the folded needle, else [`TextMatch::Tolerant`] when it does as OCR
/// reads text. `None` for an empty needle.
pub fn text_match(text: &str, needle: &str) -> Option<TextMatch> {
    let n = fold(needle);
    if n.is_empty() {
        return None;
    }
    if fold(text).contains(&n) {
        return Some(TextMatch::Exact);
    }
    let n = ocr_fold(needle);
    (n.chars().count() >= MIN_TOLERANT && ocr_fold(text).contains(&n))
        .then_some(TextMatch::Tolerant)
}

/// Whether `needle` occurs in `hay` (both folded) on word boundaries: at the ends, beside a
/// space, or where the text on either side is CJK (which has no spaces between words).
pub(crate) fn contains_words(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let first_cjk = needle.chars().next().is_some_and(is_cjk);
    let last_cjk = needle.chars().next_back().is_some_and(is_cjk);
    hay.match_indices(needle).any(|(at, _)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        let left = first_cjk || before.is_none_or(|c| c == ' ' || is_cjk(c));
        let right = last_cjk || after.is_none_or(|c| c == ' ' || is_cjk(c));
        left && right
    })
}

/// Characters that carry the text (spaces not counted).
pub(crate) fn letters(s: &str) -> usize {
    s.chars().filter(|c| *c != ' ').count()
}

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Words, with CJK runs split into bigrams (a lone CJK character stays a unigram).
pub(crate) fn terms(folded: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in folded.split(' ').filter(|w| !w.is_empty()) {
        let mut latin = String::new();
        let mut run: Vec<char> = Vec::new();
        let flush_run = |run: &mut Vec<char>, out: &mut Vec<String>| {
            match run.len() {
                0 => {}
                1 => out.push(run[0].to_string()),
                _ => out.extend(run.windows(2).map(|w| w.iter().collect())),
            }
            run.clear();
        };
        for c in word.chars() {
            if is_cjk(c) {
                if !latin.is_empty() {
                    out.push(std::mem::take(&mut latin));
                }
                run.push(c);
            } else {
                flush_run(&mut run, &mut out);
                latin.push(c);
            }
        }
        flush_run(&mut run, &mut out);
        if !latin.is_empty() {
            out.push(latin);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_bigrams() {
        assert_eq!(
            terms("保存并关闭 ok"),
            ["保存", "存并", "并关", "关闭", "ok"]
        );
        assert_eq!(terms("存"), ["存"]);
    }

    #[test]
    fn text_match_prefers_exact_and_tolerates_what_ocr_does() {
        use TextMatch::{Exact, Tolerant};
        let cases: &[(&str, &str, Option<TextMatch>)] = &[
            ("LATER 9271 READY", "later 9271", Some(Exact)),
            ("LATER 927 1 READY", "LATER 9271", Some(Tolerant)),
            ("LATER 9Z71 READY", "LATER 9271", None),
            ("Build 0K, l0g saved", "build ok, log saved", Some(Tolerant)),
            ("ＴＯＴＡＬ　９８.５０", "total 98.50", Some(Exact)),
            ("I1 items", "11 items", Some(Tolerant)),
            // Too short to match once spaces and look-alikes stop counting.
            ("o l", "0l", None),
            ("anything", "  ", None),
        ];
        for (text, needle, want) in cases {
            assert_eq!(text_match(text, needle), *want, "{needle:?} in {text:?}");
        }
        assert!(Exact > Tolerant);
    }
}
