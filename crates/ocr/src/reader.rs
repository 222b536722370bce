//! Reading a gray image with Tesseract: bands in parallel, one warm engine per language set
//! per thread, and the words of unchanged bands remembered.
//!
//! A band is remembered by every pixel its read looks at (the band and the context rows
//! around it) and where the band sits in them, so an answer from memory is the answer a cold
//! read of the same screen gives; a band whose neighbour changed within its context is read
//! again.
//!
//! This runs inside the OCR worker process (`worker`), where `OMP_THREAD_LIMIT=1` keeps
//! Tesseract from spinning up OpenMP threads that only slow it down on a small machine; the
//! parallelism is ours, one band per thread.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use deskpilot_backend::GrayImage;
use deskpilot_types::{OcrLine, OcrWord, Rect};

use crate::prepare::{self, Band};
use crate::tesseract::{self, Api};

/// Bands whose words are remembered, by pixel fingerprint.
const CACHE_BANDS: usize = 512;
/// Bands are at least this many rows tall (before enlarging), so Tesseract sees whole lines
/// with some context and the per-call overhead stays small.
const MIN_BAND: u32 = 40;

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Tesseract cannot be loaded.
    Unavailable(String),
    /// A language whose data is not installed.
    LanguageMissing {
        language: String,
        installed: Vec<String>,
    },
}

/// The result of one read: lines in the image's pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    pub lines: Vec<OcrLine>,
    pub languages: Vec<String>,
    pub elapsed: Duration,
    /// Bands answered from memory, bands in all.
    pub reused: (usize, usize),
}

/// How to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Enlarge bands this many times (1 or 2; 0 chooses per band from the height of its text
    /// rows): UI text at 96 dpi is too small for Tesseract's models, which miss short words
    /// ("Save") at 1×.
    pub scale: u32,
    /// Tesseract's page segmentation mode.
    pub psm: i32,
    /// Threads reading bands at once.
    pub threads: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            scale: 0,
            psm: tesseract::PSM_SPARSE_TEXT,
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .clamp(1, 4),
        }
    }
}

/// What a band's reading depends on: the fingerprint of every row read (the band and its
/// context), where the band sits in them (rows above, rows of the band), the languages, the
/// scale and the segmentation mode.
type CacheKey = (u64, u32, u32, String, u32, i32);
/// Lines of words per band fingerprint, and the order they were remembered in.
type Cache = (HashMap<CacheKey, Vec<Vec<OcrWord>>>, VecDeque<CacheKey>);

/// Warm engines and remembered bands.
#[derive(Debug)]
pub struct Reader {
    datapath: Option<PathBuf>,
    /// Whether words of unchanged bands are remembered.
    remember: bool,
    tuning: Tuning,
    /// Idle engines by language set.
    engines: Mutex<HashMap<String, Vec<Api>>>,
    cache: Mutex<Cache>,
}

/// Where Tesseract's language data lives: `TESSDATA_PREFIX`, else the Debian and upstream
/// default directories.
pub fn tessdata_dir() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("TESSDATA_PREFIX") {
        let p = PathBuf::from(p);
        candidates.push(p.join("tessdata"));
        candidates.push(p);
    }
    for p in [
        "/usr/share/tesseract-ocr/5/tessdata",
        "/usr/share/tesseract-ocr/4.00/tessdata",
        "/usr/share/tessdata",
        "/usr/local/share/tessdata",
    ] {
        candidates.push(PathBuf::from(p));
    }
    candidates
        .into_iter()
        .find(|p| p.join("eng.traineddata").is_file() || has_traineddata(p))
}

fn has_traineddata(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| {
        d.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "traineddata")))
    })
}

/// The installed languages (`osd`, which is no language, left out), sorted.
pub fn installed_languages() -> Vec<String> {
    let Some(dir) = tessdata_dir() else {
        return Vec::new();
    };
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "traineddata")
                .then(|| p.file_stem()?.to_str().map(str::to_string))
                .flatten()
        })
        .filter(|l| l != "osd" && l != "equ")
        .collect();
    out.sort();
    out
}

/// English and Simplified Chinese where installed, else whatever is.
pub fn default_languages(installed: &[String]) -> Vec<String> {
    let wanted: Vec<String> = ["eng", "chi_sim"]
        .iter()
        .filter(|l| installed.iter().any(|i| i == *l))
        .map(|l| l.to_string())
        .collect();
    if wanted.is_empty() {
        installed.iter().take(1).cloned().collect()
    } else {
        wanted
    }
}

impl Reader {
    pub fn new(tuning: Tuning) -> Reader {
        Reader {
            datapath: tessdata_dir(),
            // The benchmark measures cold reads; nothing else should switch memory off.
            remember: std::env::var_os("DESKPILOT_OCR_NO_CACHE").is_none(),
            tuning,
            engines: Mutex::default(),
            cache: Mutex::default(),
        }
    }

    /// Checks `languages` (the defaults when empty) against what is installed.
    pub fn languages(&self, languages: &[String]) -> Result<Vec<String>, ReadError> {
        tesseract::version().map_err(ReadError::Unavailable)?;
        let installed = installed_languages();
        let languages = if languages.is_empty() {
            default_languages(&installed)
        } else {
            languages.to_vec()
        };
        if languages.is_empty() {
            return Err(ReadError::LanguageMissing {
                language: "eng".to_string(),
                installed,
            });
        }
        if let Some(missing) = languages.iter().find(|l| !installed.contains(l)) {
            return Err(ReadError::LanguageMissing {
                language: missing.clone(),
                installed,
            });
        }
        Ok(languages)
    }

    fn engine(&self, languages: &str, psm: i32) -> Result<Api, ReadError> {
        if let Some(api) = self
            .engines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&format!("{languages}#{psm}"))
            .and_then(Vec::pop)
        {
            return Ok(api);
        }
        let path = self.datapath.as_ref().and_then(|p| p.to_str());
        Api::new(path, languages, psm).map_err(ReadError::Unavailable)
    }

    fn give_back(&self, api: Api) {
        self.engines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(format!("{}#{}", api.languages, api.psm))
            .or_default()
            .push(api);
    }

    /// Starts engines for `languages` on every thread, so the first read pays no start-up.
    pub fn warm(&self, languages: &[String]) -> Result<(), ReadError> {
        let (primary, secondary) = passes(&self.languages(languages)?);
        let engines: Result<Vec<Api>, _> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.tuning.threads)
                .flat_map(|_| {
                    let mut wanted = vec![(primary.clone(), self.tuning.psm)];
                    if let Some(second) = &secondary {
                        wanted.push((second.clone(), tesseract::PSM_SINGLE_LINE));
                    }
                    wanted
                })
                .map(|(langs, psm)| s.spawn(move || self.engine(&langs, psm)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(ReadError::Unavailable("engine start panicked".into()))
                    })
                })
                .collect()
        });
        engines?.into_iter().for_each(|a| self.give_back(a));
        Ok(())
    }

    /// Reads `image`. Lines come back top to bottom, in the image's pixels.
    pub fn read(&self, image: &GrayImage, languages: &[String]) -> Result<Read, ReadError> {
        let started = Instant::now();
        let languages = self.languages(languages)?;
        let set = languages.join("+");
        let (primary, secondary) = passes(&languages);
        let Tuning {
            scale,
            psm,
            threads,
        } = self.tuning;
        let mut normal = image.clone();
        prepare::normalize_polarity(&mut normal);
        let image = &normal;
        let bands = prepare::bands(image, MIN_BAND);
        let total = bands.len();
        // Band index → its lines, from memory or to be read.
        let mut results: Vec<Option<Vec<Vec<OcrWord>>>> = vec![None; total];
        let mut todo = Vec::new();
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (i, band) in bands.iter().enumerate() {
                if !prepare::has_ink(image, *band) {
                    results[i] = Some(Vec::new());
                    continue;
                }
                let read = rows_read(image, *band);
                let key = (
                    prepare::fingerprint(image, read),
                    band.top - read.top,
                    band.height,
                    set.clone(),
                    scale,
                    psm,
                );
                match cache.0.get(&key).filter(|_| self.remember) {
                    Some(lines) => results[i] = Some(lines.clone()),
                    None => todo.push((i, key)),
                }
            }
        }
        let reused = total - todo.len();
        // Biggest bands first, so one long band does not finish last alone.
        todo.sort_by_key(|(i, _)| std::cmp::Reverse(bands[*i].height));
        let next = AtomicUsize::new(0);
        let read: Vec<(usize, CacheKey, Vec<Vec<OcrWord>>)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads.min(todo.len()))
                .map(|_| {
                    s.spawn(|| -> Result<Vec<_>, ReadError> {
                        let mut api = self.engine(&primary, psm)?;
                        let mut second = match &secondary {
                            Some(langs) => Some(self.engine(langs, tesseract::PSM_SINGLE_LINE)?),
                            None => None,
                        };
                        let mut out = Vec::new();
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some((i, key)) = todo.get(k) else { break };
                            let band = bands[*i];
                            let scale = if scale == 0 {
                                prepare::scale_for(image, band)
                            } else {
                                scale
                            };
                            let lines = read_band(&mut api, second.as_mut(), image, band, scale);
                            out.push((*i, key.clone(), lines));
                        }
                        self.give_back(api);
                        if let Some(second) = second {
                            self.give_back(second);
                        }
                        Ok(out)
                    })
                })
                .collect();
            let mut all = Vec::new();
            for w in workers {
                match w.join() {
                    Ok(Ok(part)) => all.extend(part),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Err(ReadError::Unavailable("an OCR thread panicked".into())),
                }
            }
            Ok(all)
        })?;
        {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (i, key, lines) in read {
                if cache.0.insert(key.clone(), lines.clone()).is_none() {
                    cache.1.push_back(key);
                }
                while cache.1.len() > CACHE_BANDS {
                    if let Some(old) = cache.1.pop_front() {
                        cache.0.remove(&old);
                    }
                }
                results[i] = Some(lines);
            }
        }
        let mut lines: Vec<OcrLine> = results
            .into_iter()
            .zip(&bands)
            .flat_map(|(lines, band)| {
                lines.unwrap_or_default().into_iter().map(move |words| {
                    let placed = words
                        .into_iter()
                        .map(|mut w| {
                            w.bounds.y += band.top as i32;
                            w
                        })
                        .collect();
                    OcrLine::from_words(placed)
                })
            })
            .collect();
        lines.sort_by_key(|l| (l.bounds.y + l.bounds.height as i32 / 2, l.bounds.x));
        Ok(Read {
            lines,
            languages,
            elapsed: started.elapsed(),
            reused: (reused, total),
        })
    }
}

/// Rows of context read above and below a band (words centred in them belong to the
/// neighbour): a cut close under a line otherwise leaves Tesseract too little margin.
const CONTEXT: u32 = 8;

/// The rows read for `band`: the band and up to [`CONTEXT`] rows on each side. Nothing else
/// of the image is looked at while reading it, so these rows are what its words are
/// remembered by.
fn rows_read(image: &GrayImage, band: Band) -> Band {
    let top = band.top.saturating_sub(CONTEXT);
    let bottom = (band.top + band.height + CONTEXT).min(image.height);
    Band {
        top,
        height: bottom - top,
    }
}

/// How a language set is read: English first over everything (its model is the fastest), then
/// the other languages only on the lines English read poorly. Reading every line with
/// `eng+chi_sim` costs Tesseract a Chinese retry on each uncertain word, twice the time.
fn passes(languages: &[String]) -> (String, Option<String>) {
    let others: Vec<&str> = languages
        .iter()
        .map(String::as_str)
        .filter(|l| *l != "eng")
        .collect();
    if languages.len() > 1 && languages.iter().any(|l| l == "eng") {
        ("eng".to_string(), Some(others.join("+")))
    } else {
        (languages.join("+"), None)
    }
}

/// A first-pass line below this mean confidence is read again in the other languages.
const RETRY_BELOW: f32 = 65.0;

/// Whether a poorly read line could be text of another script: at least glyph-high and not
/// narrower than a square glyph (what is thinner or smaller is punctuation or noise).
fn worth_retrying(words: &[OcrWord]) -> bool {
    let line = OcrLine::from_words(words.to_vec());
    line.confidence < RETRY_BELOW
        && line.bounds.height >= 10
        && line.bounds.width * 5 >= line.bounds.height * 4
}

/// Reads one band; lines of words with bounds relative to the band's top-left corner.
fn read_band(
    api: &mut Api,
    second: Option<&mut Api>,
    image: &GrayImage,
    band: Band,
    scale: u32,
) -> Vec<Vec<OcrWord>> {
    let mut lines = read_rows(api, image, band, scale);
    let Some(second) = second else {
        return lines;
    };
    for line in lines.iter_mut().filter(|l| worth_retrying(l)) {
        let first = OcrLine::from_words(line.clone());
        let b = first.bounds;
        let pad = (b.height as i32 / 2).max(8);
        let area = Rect::new(
            b.x - pad,
            band.top as i32 + b.y - pad,
            b.width + 2 * pad as u32,
            b.height + 2 * pad as u32,
        );
        // Within the rows read for the band: the words are remembered by those alone.
        let rows = rows_read(image, band);
        let area = area
            .intersect(&Rect::new(0, rows.top as i32, image.width, rows.height))
            .unwrap_or_default();
        let (crop, placed) = prepare::sub_image(image, area);
        if crop.width == 0 || crop.height == 0 {
            continue;
        }
        let s = scale.max(1);
        let big = prepare::crop_scaled(
            &crop,
            Band {
                top: 0,
                height: crop.height,
            },
            s,
        );
        let words: Vec<OcrWord> = second
            .recognize(&big.data, big.width, big.height, 96 * s)
            .into_iter()
            .map(|w| {
                let mut word = w.word;
                let r = word.bounds;
                let si = s as i32;
                word.bounds = Rect::new(
                    placed.x + r.x / si,
                    placed.y - band.top as i32 + r.y / si,
                    (r.width / s).max(1),
                    (r.height / s).max(1),
                );
                word
            })
            .collect();
        if words.is_empty() {
            continue;
        }
        let again = OcrLine::from_words(words.clone());
        if again.confidence > first.confidence + 10.0 {
            *line = words;
        }
    }
    lines
}

/// Reads one band with one engine.
fn read_rows(api: &mut Api, image: &GrayImage, band: Band, scale: u32) -> Vec<Vec<OcrWord>> {
    let scale = scale.max(1);
    let padded = rows_read(image, band);
    let top = padded.top;
    let prepared = prepare::crop_scaled(image, padded, scale);
    let words = api.recognize(&prepared.data, prepared.width, prepared.height, 96 * scale);
    let mut lines: Vec<Vec<OcrWord>> = Vec::new();
    let mut in_line = false;
    for w in words {
        let mut word = w.word;
        // Back to the band's pixels: outward, so a box never shrinks inside its glyphs.
        let b = word.bounds;
        let s = scale as i32;
        let (x0, y0) = (b.x / s, b.y / s + (top as i32 - band.top as i32));
        let x1 = (b.x + b.width as i32 + s - 1) / s;
        let y1 = (b.y + b.height as i32 + s - 1) / s + (top as i32 - band.top as i32);
        word.bounds = Rect::new(x0, y0, (x1 - x0).max(1) as u32, (y1 - y0).max(1) as u32);
        let centre = y0 + (y1 - y0) / 2;
        if centre < 0 || centre >= band.height as i32 {
            // The neighbouring band reads this one.
            in_line = false;
            continue;
        }
        if w.starts_line || !in_line {
            lines.push(vec![word]);
            in_line = true;
        } else if let Some(line) = lines.last_mut() {
            line.push(word);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn english_goes_first_and_the_rest_only_where_it_read_poorly() {
        assert_eq!(
            passes(&langs(&["eng", "chi_sim"])),
            ("eng".into(), Some("chi_sim".into()))
        );
        assert_eq!(
            passes(&langs(&["chi_sim", "eng", "jpn"])),
            ("eng".into(), Some("chi_sim+jpn".into()))
        );
        assert_eq!(passes(&langs(&["eng"])), ("eng".into(), None));
        assert_eq!(passes(&langs(&["chi_sim"])), ("chi_sim".into(), None));
        let word = |w: u32, h: u32, confidence: f32| OcrWord {
            text: "x".into(),
            confidence,
            bounds: Rect::new(0, 0, w, h),
            language: "eng".into(),
        };
        assert!(
            worth_retrying(&[word(70, 17, 49.0)]),
            "junk where Chinese was"
        );
        assert!(!worth_retrying(&[word(70, 17, 90.0)]), "read well");
        assert!(
            !worth_retrying(&[word(8, 6, 20.0)]),
            "too small for a glyph"
        );
        assert!(
            !worth_retrying(&[word(5, 12, 20.0)]),
            "thinner than a glyph"
        );
    }

    /// A capture in `fixtures/ocr/` as the worker gets it: the gray copy of its pixels (the
    /// engine's `GrayImage::from_frame` weights).
    fn fixture(name: &str) -> GrayImage {
        let path = format!("{}/../../fixtures/ocr/{name}", env!("CARGO_MANIFEST_DIR"));
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut png = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut buf = vec![0; png.output_buffer_size().unwrap()];
        let info = png.next_frame(&mut buf).unwrap();
        let data = buf[..info.buffer_size()]
            .chunks_exact(info.color_type.samples())
            .map(|p| ((p[0] as u32 * 77 + p[1] as u32 * 150 + p[2] as u32 * 29) >> 8) as u8)
            .collect();
        GrayImage {
            width: info.width,
            height: info.height,
            data,
        }
    }

    fn texts(read: &Read) -> Vec<String> {
        read.lines
            .iter()
            .map(|l| format!("{} {:?} {:.1}", l.text, l.bounds, l.confidence))
            .collect()
    }

    /// Regression (issue 22, OCR after the screen changed): a band whose own pixels had not
    /// changed was answered from memory although the rows read around it (its context) had,
    /// so the first line of `xterm-dejavu-1` came back as it was read beside the cursor of
    /// `xterm-dejavu-0` ("和 4711 TOTAL 98.50", its box stretched over the line below), where
    /// a cold read of the same pixels says "Invoice 4711 …". Real xterm captures, each read
    /// in order through the band memory and again cold: the answers must be the same.
    #[test]
    #[allow(clippy::print_stderr)]
    fn a_changed_screen_reads_through_the_band_memory_exactly_as_cold() {
        if let Err(e) = tesseract::version() {
            eprintln!("SKIP: no Tesseract here ({e})");
            return;
        }
        let langs = langs(&["eng", "chi_sim"]);
        if let Err(e) = Reader::new(Tuning::default()).languages(&langs) {
            eprintln!("SKIP: {e:?}");
            return;
        }
        for font in ["dejavu", "fixed"] {
            let remembering = Reader::new(Tuning::default());
            let cold = Reader {
                remember: false,
                ..Reader::new(Tuning::default())
            };
            // Start every engine first, so the times compare reading, not start-up.
            remembering.warm(&langs).unwrap();
            cold.warm(&langs).unwrap();
            let mut reused = 0;
            for step in 0..3 {
                let name = format!("xterm-{font}-{step}.png");
                let image = fixture(&name);
                let warm = remembering.read(&image, &langs).unwrap();
                let fresh = cold.read(&image, &langs).unwrap();
                eprintln!(
                    "{name}: band memory {:.0} ms ({} of {} bands reused), cold {:.0} ms",
                    warm.elapsed.as_secs_f64() * 1e3,
                    warm.reused.0,
                    warm.reused.1,
                    fresh.elapsed.as_secs_f64() * 1e3
                );
                assert_eq!(
                    fresh.reused.0, 0,
                    "{name}: the cold reader remembers nothing"
                );
                assert_eq!(
                    texts(&warm),
                    texts(&fresh),
                    "{name}: memory and cold differ"
                );
                reused += warm.reused.0;
            }
            assert!(reused > 0, "{font}: no band was answered from memory");
            // The line the agent waited for is read (spaces inside it are the matcher's
            // business, not the reader's).
            let last = remembering
                .read(&fixture(&format!("xterm-{font}-2.png")), &langs)
                .unwrap();
            eprintln!(
                "xterm-{font}-2.png again: band memory {:.1} ms ({} of {} bands reused)",
                last.elapsed.as_secs_f64() * 1e3,
                last.reused.0,
                last.reused.1
            );
            assert_eq!(
                last.reused.0, last.reused.1,
                "an unchanged screen is not read again"
            );
            assert!(
                last.lines
                    .iter()
                    .any(|l| l.text.replace(' ', "").contains("LATER9271READY")),
                "{font}: {:?}",
                texts(&last)
            );
        }
    }
}
