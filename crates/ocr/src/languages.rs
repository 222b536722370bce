//! Language names across engines: Tesseract's codes (`eng`, `chi_sim`) are what tools accept
//! everywhere; Windows.Media.Ocr wants BCP-47 tags (`en-US`, `zh-Hans-CN`).

/// The BCP-47 tag Windows.Media.Ocr knows a Tesseract code by; an unknown code passes through
/// (a caller on Windows may give a tag directly).
pub fn bcp47(code: &str) -> String {
    match code.trim().to_ascii_lowercase().as_str() {
        "eng" => "en-US",
        "chi_sim" => "zh-Hans-CN",
        "chi_tra" => "zh-Hant-TW",
        "jpn" => "ja-JP",
        "kor" => "ko-KR",
        "deu" => "de-DE",
        "fra" => "fr-FR",
        "spa" => "es-ES",
        "rus" => "ru-RU",
        "ita" => "it-IT",
        "por" => "pt-PT",
        _ => return code.trim().to_string(),
    }
    .to_string()
}

/// The Tesseract code for a BCP-47 tag (by its language and script), for reporting what a
/// Windows engine read with; unknown tags pass through.
pub fn tesseract_code(tag: &str) -> String {
    let lower = tag.to_ascii_lowercase();
    let primary = lower.split('-').next().unwrap_or("");
    match primary {
        "en" => "eng",
        "zh" if lower.contains("hant") || lower.ends_with("-tw") || lower.ends_with("-hk") => {
            "chi_tra"
        }
        "zh" => "chi_sim",
        "ja" => "jpn",
        "ko" => "kor",
        "de" => "deu",
        "fr" => "fra",
        "es" => "spa",
        "ru" => "rus",
        "it" => "ita",
        "pt" => "por",
        _ => return tag.to_string(),
    }
    .to_string()
}

/// The one language a single-language engine (Windows.Media.Ocr) should read a request for
/// `codes` with: Chinese when asked for, since its Chinese models also read Latin text; else
/// the first; `None` for the user's profile languages.
pub fn single(codes: &[String]) -> Option<String> {
    codes
        .iter()
        .find(|c| c.starts_with("chi_"))
        .or_else(|| codes.first())
        .map(|c| bcp47(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_tags_map_both_ways() {
        assert_eq!(bcp47("eng"), "en-US");
        assert_eq!(bcp47("chi_sim"), "zh-Hans-CN");
        assert_eq!(bcp47("nl-NL"), "nl-NL");
        assert_eq!(tesseract_code("zh-Hans-CN"), "chi_sim");
        assert_eq!(tesseract_code("zh-Hant-TW"), "chi_tra");
        assert_eq!(tesseract_code("en-GB"), "eng");
        for code in ["eng", "chi_sim", "jpn", "kor", "deu"] {
            assert_eq!(tesseract_code(&bcp47(code)), code);
        }
    }

    #[test]
    fn a_single_language_engine_prefers_chinese() {
        let ask = |c: &[&str]| single(&c.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(ask(&["eng", "chi_sim"]).as_deref(), Some("zh-Hans-CN"));
        assert_eq!(ask(&["deu"]).as_deref(), Some("de-DE"));
        assert_eq!(ask(&[]), None);
    }
}
