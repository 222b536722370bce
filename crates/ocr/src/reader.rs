//! Reading a gray image with Tesseract: bands in parallel, one warm engine per language set
//! per thread, and the words of unchanged bands remembered.
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

type CacheKey = (u64, String, u32, i32);
/// Lines of words per band fingerprint, and the order they were remembered in.
type Cache = (HashMap<CacheKey, Vec<Vec<OcrWord>>>, VecDeque<CacheKey>);

/// Warm engines and remembered bands.
#[derive(Debug)]
pub struct Reader {
    datapath: Option<PathBuf>,
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

    fn engine(&self, languages: &str) -> Result<Api, ReadError> {
        if let Some(api) = self
            .engines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(languages)
            .and_then(Vec::pop)
        {
            return Ok(api);
        }
        let path = self.datapath.as_ref().and_then(|p| p.to_str());
        Api::new(path, languages, self.tuning.psm).map_err(ReadError::Unavailable)
    }

    fn give_back(&self, api: Api) {
        self.engines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(api.languages.clone())
            .or_default()
            .push(api);
    }

    /// Starts engines for `languages` on every thread, so the first read pays no start-up.
    pub fn warm(&self, languages: &[String]) -> Result<(), ReadError> {
        let languages = self.languages(languages)?.join("+");
        let engines: Result<Vec<Api>, _> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.tuning.threads)
                .map(|_| s.spawn(|| self.engine(&languages)))
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
                let key = (prepare::fingerprint(image, *band), set.clone(), scale, psm);
                match cache.0.get(&key) {
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
                        let mut api = self.engine(&set)?;
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
                            let lines = read_band(&mut api, image, band, scale);
                            out.push((*i, key.clone(), lines));
                        }
                        self.give_back(api);
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

/// Reads one band; lines of words with bounds relative to the band's top-left corner.
fn read_band(api: &mut Api, image: &GrayImage, band: Band, scale: u32) -> Vec<Vec<OcrWord>> {
    let scale = scale.max(1);
    let top = band.top.saturating_sub(CONTEXT);
    let bottom = (band.top + band.height + CONTEXT).min(image.height);
    let padded = Band {
        top,
        height: bottom - top,
    };
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
