//! Tesseract through its C API, loaded at run time.
//!
//! `libtesseract.so.5` is opened with `dlopen` rather than linked, so the deskpilot binary
//! starts (and everything but OCR works) on a machine without Tesseract, and building needs
//! neither its headers nor clang. Only the dozen functions below are used; their signatures
//! are those of `tesseract/capi.h` (5.x), where `BOOL` is `int`.

use std::ffi::{CStr, CString, c_char, c_float, c_int, c_void};
use std::sync::OnceLock;

use deskpilot_types::{OcrWord, Rect};

/// Page segmentation: fully automatic, without orientation detection.
pub const PSM_AUTO: c_int = 3;
/// Page segmentation: sparse text, as much as possible in no particular order.
pub const PSM_SPARSE_TEXT: c_int = 11;
/// Page segmentation: the image is one line of text.
pub const PSM_SINGLE_LINE: c_int = 7;
const RIL_TEXTLINE: c_int = 2;
const RIL_WORD: c_int = 3;

type Handle = *mut c_void;

/// The entry points, resolved once per process.
struct Lib {
    version: unsafe extern "C" fn() -> *const c_char,
    create: unsafe extern "C" fn() -> Handle,
    delete: unsafe extern "C" fn(Handle),
    init3: unsafe extern "C" fn(Handle, *const c_char, *const c_char) -> c_int,
    set_variable: unsafe extern "C" fn(Handle, *const c_char, *const c_char) -> c_int,
    set_page_seg_mode: unsafe extern "C" fn(Handle, c_int),
    set_image: unsafe extern "C" fn(Handle, *const u8, c_int, c_int, c_int, c_int),
    set_source_resolution: unsafe extern "C" fn(Handle, c_int),
    recognize: unsafe extern "C" fn(Handle, *mut c_void) -> c_int,
    clear: unsafe extern "C" fn(Handle),
    get_iterator: unsafe extern "C" fn(Handle) -> Handle,
    get_available_languages: unsafe extern "C" fn(Handle) -> *mut *mut c_char,
    delete_text_array: unsafe extern "C" fn(*mut *mut c_char),
    result_iterator_delete: unsafe extern "C" fn(Handle),
    result_iterator_next: unsafe extern "C" fn(Handle, c_int) -> c_int,
    result_iterator_text: unsafe extern "C" fn(Handle, c_int) -> *mut c_char,
    result_iterator_confidence: unsafe extern "C" fn(Handle, c_int) -> c_float,
    result_iterator_language: unsafe extern "C" fn(Handle) -> *const c_char,
    result_iterator_page_iterator: unsafe extern "C" fn(Handle) -> Handle,
    page_iterator_bounding_box: unsafe extern "C" fn(
        Handle,
        c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
    ) -> c_int,
    page_iterator_is_at_beginning_of: unsafe extern "C" fn(Handle, c_int) -> c_int,
    delete_text: unsafe extern "C" fn(*const c_char),
}

/// A symbol's address as the function pointer type `F`.
///
/// # Safety
/// `p` must be the address of a function whose C signature is `F`.
unsafe fn function<F: Copy>(p: *mut c_void) -> F {
    assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
    // SAFETY: same size (checked); the caller vouches for the signature.
    unsafe { std::mem::transmute_copy(&p) }
}

/// The library names tried, newest first.
const LIBRARIES: &[&str] = &["libtesseract.so.5", "libtesseract.so"];

/// Loads the library once; the error says what is missing.
fn lib() -> Result<&'static Lib, String> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Lib, String> {
    let mut handle = std::ptr::null_mut();
    let mut errors = Vec::new();
    for name in LIBRARIES {
        let c = CString::new(*name).map_err(|e| e.to_string())?;
        // SAFETY: `c` is a valid NUL-terminated string; dlopen has no other preconditions.
        handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !handle.is_null() {
            break;
        }
        // SAFETY: dlerror returns a thread-local string or null.
        let why = unsafe { libc::dlerror() };
        if !why.is_null() {
            // SAFETY: non-null dlerror results are NUL-terminated C strings.
            errors.push(
                unsafe { CStr::from_ptr(why) }
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    if handle.is_null() {
        return Err(format!("cannot load libtesseract ({})", errors.join("; ")));
    }
    // Leptonica (loaded with Tesseract) reports boxes it clips on stderr; nothing to act on.
    // SAFETY: `handle` is live; the name is NUL-terminated; setMsgSeverity takes and returns an int.
    unsafe {
        let p = libc::dlsym(handle, c"setMsgSeverity".as_ptr());
        if !p.is_null() {
            let set: unsafe extern "C" fn(c_int) -> c_int = function(p);
            set(6); // L_SEVERITY_NONE
        }
    }
    macro_rules! sym {
        ($name:literal) => {{
            let c = concat!($name, "\0");
            // SAFETY: `handle` is a live dlopen handle and `c` is NUL-terminated.
            let p = unsafe { libc::dlsym(handle, c.as_ptr().cast()) };
            if p.is_null() {
                return Err(format!("libtesseract has no {}", $name));
            }
            // SAFETY: the symbol is the C function of that name in capi.h, whose signature
            // the field's type spells out.
            unsafe { function(p) }
        }};
    }
    Ok(Lib {
        version: sym!("TessVersion"),
        create: sym!("TessBaseAPICreate"),
        delete: sym!("TessBaseAPIDelete"),
        init3: sym!("TessBaseAPIInit3"),
        set_variable: sym!("TessBaseAPISetVariable"),
        set_page_seg_mode: sym!("TessBaseAPISetPageSegMode"),
        set_image: sym!("TessBaseAPISetImage"),
        set_source_resolution: sym!("TessBaseAPISetSourceResolution"),
        recognize: sym!("TessBaseAPIRecognize"),
        clear: sym!("TessBaseAPIClear"),
        get_iterator: sym!("TessBaseAPIGetIterator"),
        get_available_languages: sym!("TessBaseAPIGetAvailableLanguagesAsVector"),
        delete_text_array: sym!("TessDeleteTextArray"),
        result_iterator_delete: sym!("TessResultIteratorDelete"),
        result_iterator_next: sym!("TessResultIteratorNext"),
        result_iterator_text: sym!("TessResultIteratorGetUTF8Text"),
        result_iterator_confidence: sym!("TessResultIteratorConfidence"),
        result_iterator_language: sym!("TessResultIteratorWordRecognitionLanguage"),
        result_iterator_page_iterator: sym!("TessResultIteratorGetPageIterator"),
        page_iterator_bounding_box: sym!("TessPageIteratorBoundingBox"),
        page_iterator_is_at_beginning_of: sym!("TessPageIteratorIsAtBeginningOf"),
        delete_text: sym!("TessDeleteText"),
    })
}

/// Tesseract's version string, e.g. `5.3.0`.
pub fn version() -> Result<String, String> {
    let lib = lib()?;
    // SAFETY: TessVersion returns a static NUL-terminated string.
    Ok(unsafe { CStr::from_ptr((lib.version)()) }
        .to_string_lossy()
        .into_owned())
}

/// One word as Tesseract placed it, with whether it starts a new text line.
#[derive(Debug, Clone)]
pub struct Word {
    pub word: OcrWord,
    pub starts_line: bool,
}

/// One initialised engine for one language set (`eng+chi_sim`). Not shareable between
/// threads at once, but may move between them.
pub struct Api {
    lib: &'static Lib,
    handle: Handle,
    pub languages: String,
    /// The page segmentation mode it was set up with.
    pub psm: c_int,
}

// SAFETY: a TessBaseAPI has no thread affinity; `Api` is not `Sync`, so it is used by one
// thread at a time.
unsafe impl Send for Api {}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Api({})", self.languages)
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        // SAFETY: `handle` came from TessBaseAPICreate and is deleted once.
        unsafe { (self.lib.delete)(self.handle) };
    }
}

impl Api {
    /// An engine reading `languages` (`+`-joined codes) with data from `datapath` (Tesseract's
    /// built-in default when `None`).
    pub fn new(datapath: Option<&str>, languages: &str, psm: c_int) -> Result<Api, String> {
        let lib = lib()?;
        // SAFETY: plain constructor.
        let handle = unsafe { (lib.create)() };
        if handle.is_null() {
            return Err("TessBaseAPICreate returned null".to_string());
        }
        let api = Api {
            lib,
            handle,
            languages: languages.to_string(),
            psm,
        };
        let lang = CString::new(languages).map_err(|e| e.to_string())?;
        let path = datapath
            .map(CString::new)
            .transpose()
            .map_err(|e| e.to_string())?;
        // SAFETY: `handle` is live; both strings are NUL-terminated or null.
        let rc = unsafe {
            (lib.init3)(
                handle,
                path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
                lang.as_ptr(),
            )
        };
        if rc != 0 {
            return Err(format!(
                "Tesseract could not load the language data {languages:?}"
            ));
        }
        // SAFETY: `handle` is live.
        unsafe { (lib.set_page_seg_mode)(handle, psm) };
        // Quiet: Tesseract's own diagnostics ("Estimating resolution…") say nothing useful here.
        api.set("debug_file", "/dev/null");
        Ok(api)
    }

    /// Sets a Tesseract variable; false when it has no such variable.
    pub fn set(&self, name: &str, value: &str) -> bool {
        let (Ok(n), Ok(v)) = (CString::new(name), CString::new(value)) else {
            return false;
        };
        // SAFETY: `handle` is live; both strings are NUL-terminated.
        unsafe { (self.lib.set_variable)(self.handle, n.as_ptr(), v.as_ptr()) != 0 }
    }

    /// The languages this installation has data for.
    pub fn available_languages(&self) -> Vec<String> {
        // SAFETY: `handle` is initialised; the array is NULL-terminated and freed below.
        unsafe {
            let array = (self.lib.get_available_languages)(self.handle);
            if array.is_null() {
                return Vec::new();
            }
            let mut out = Vec::new();
            let mut at = array;
            while !(*at).is_null() {
                out.push(CStr::from_ptr(*at).to_string_lossy().into_owned());
                at = at.add(1);
            }
            (self.lib.delete_text_array)(array);
            out.sort();
            out
        }
    }

    /// Recognises an 8-bit gray image; word bounds are in its pixels.
    pub fn recognize(&mut self, gray: &[u8], width: u32, height: u32, ppi: u32) -> Vec<Word> {
        assert_eq!(
            gray.len(),
            width as usize * height as usize,
            "gray image size"
        );
        let lib = self.lib;
        let mut words = Vec::new();
        // SAFETY: `gray` outlives the recognition (cleared before returning); the iterator and
        // every string are freed with their C API functions; `handle` is live.
        unsafe {
            (lib.set_image)(
                self.handle,
                gray.as_ptr(),
                width as c_int,
                height as c_int,
                1,
                width as c_int,
            );
            (lib.set_source_resolution)(self.handle, ppi as c_int);
            if (lib.recognize)(self.handle, std::ptr::null_mut()) != 0 {
                (lib.clear)(self.handle);
                return words;
            }
            let it = (lib.get_iterator)(self.handle);
            if !it.is_null() {
                let page = (lib.result_iterator_page_iterator)(it);
                loop {
                    let text = (lib.result_iterator_text)(it, RIL_WORD);
                    if !text.is_null() {
                        let s = CStr::from_ptr(text).to_string_lossy().trim().to_string();
                        (lib.delete_text)(text);
                        let (mut l, mut t, mut r, mut b) = (0, 0, 0, 0);
                        let boxed = (lib.page_iterator_bounding_box)(
                            page, RIL_WORD, &mut l, &mut t, &mut r, &mut b,
                        ) != 0;
                        if !s.is_empty() && boxed && r > l && b > t {
                            let lang = (lib.result_iterator_language)(it);
                            let language = if lang.is_null() {
                                String::new()
                            } else {
                                CStr::from_ptr(lang).to_string_lossy().into_owned()
                            };
                            words.push(Word {
                                starts_line: (lib.page_iterator_is_at_beginning_of)(
                                    page,
                                    RIL_TEXTLINE,
                                ) != 0,
                                word: OcrWord {
                                    text: s,
                                    confidence: (lib.result_iterator_confidence)(it, RIL_WORD),
                                    bounds: Rect::new(l, t, (r - l) as u32, (b - t) as u32),
                                    language,
                                },
                            });
                        }
                    }
                    if (lib.result_iterator_next)(it, RIL_WORD) == 0 {
                        break;
                    }
                }
                (lib.result_iterator_delete)(it);
            }
            (lib.clear)(self.handle);
        }
        words
    }
}
