//! Text read off pixels by an OCR engine: words and lines with their bounds and confidence.
//!
//! These are never accessibility data: a surface labels them `source: ocr`.

use serde::{Deserialize, Serialize};

use crate::geometry::Rect;

/// One recognised word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OcrWord {
    pub text: String,
    /// The engine's confidence, 0–100.
    pub confidence: f32,
    /// Where the word is, in physical virtual-desktop pixels once the engine has placed the
    /// image; in image pixels inside an OCR engine.
    pub bounds: Rect,
    /// The language model that read it (`eng`, `chi_sim`).
    pub language: String,
}

/// One line of words, left to right.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OcrLine {
    /// The words joined (with a space between Latin words, none between CJK ones).
    pub text: String,
    /// The mean of the words' confidences, 0–100.
    pub confidence: f32,
    pub bounds: Rect,
    pub words: Vec<OcrWord>,
}

impl OcrLine {
    /// A line made of `words` (which must not be empty), its text, bounds and confidence
    /// derived from them.
    pub fn from_words(words: Vec<OcrWord>) -> OcrLine {
        let mut text = String::new();
        let mut bounds: Option<Rect> = None;
        let mut sum = 0.0;
        for w in &words {
            let cjk_join = text.chars().last().is_some_and(is_cjk)
                && w.text.chars().next().is_some_and(is_cjk);
            if !text.is_empty() && !cjk_join {
                text.push(' ');
            }
            text.push_str(&w.text);
            bounds = Some(match bounds {
                None => w.bounds,
                Some(b) => b.union(&w.bounds),
            });
            sum += w.confidence;
        }
        OcrLine {
            text,
            confidence: if words.is_empty() {
                0.0
            } else {
                sum / words.len() as f32
            },
            bounds: bounds.unwrap_or_default(),
            words,
        }
    }
}

/// Han, kana and hangul: scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x3000..=0x303F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, x: i32) -> OcrWord {
        OcrWord {
            text: text.to_string(),
            confidence: 90.0,
            bounds: Rect::new(x, 10, 20, 12),
            language: "eng".to_string(),
        }
    }

    #[test]
    fn a_line_joins_latin_words_with_spaces_and_cjk_without() {
        let line = OcrLine::from_words(vec![
            word("Save", 0),
            word("as", 30),
            word("保存", 60),
            word("设置", 90),
        ]);
        assert_eq!(line.text, "Save as 保存设置");
        assert_eq!(line.bounds, Rect::new(0, 10, 110, 12));
        assert_eq!(line.confidence, 90.0);
    }
}
