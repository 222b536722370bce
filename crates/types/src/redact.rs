//! The values of the secrets this process knows, and [`scrub`], which every text deskpilot
//! returns, logs or writes passes through: each known value becomes `<secret NAME>`.
//!
//! A value is registered once, when the secret is loaded (file, environment, keyring) or given
//! by the person; it is never removed while the process lives, since a text produced earlier may
//! still be on its way out. Besides the value itself, the forms it takes inside JSON strings and
//! inside Rust's `Debug` output are registered, so a log line that quotes a request still reads
//! `<secret NAME>`. Values shorter than [`MIN_SECRET_CHARS`] are refused: scrubbing "abc" would
//! mangle every text and still leave a guessable secret.
//!
//! This is state, not IO: a process-wide list behind a lock, read far more often than written.
//! With no secret known, [`scrub`] is one relaxed atomic load.

use std::borrow::Cow;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The shortest value deskpilot accepts as a secret.
pub const MIN_SECRET_CHARS: usize = 6;

/// One form of a known value and the name it is replaced by.
struct Known {
    form: String,
    name: String,
}

static KNOWN: RwLock<Vec<Known>> = RwLock::new(Vec::new());
static ANY: AtomicBool = AtomicBool::new(false);

/// A value refused as a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooShort {
    pub name: String,
    pub chars: usize,
}

impl std::fmt::Display for TooShort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "secret {} is shorter than {MIN_SECRET_CHARS} characters: too short to be scrubbed \
             from what deskpilot returns and logs without mangling other text; use a longer value",
            self.name
        )
    }
}

impl std::error::Error for TooShort {}

/// What a known value reads as: `<secret NAME>`.
pub fn placeholder(name: &str) -> String {
    format!("<secret {name}>")
}

/// Makes `value` known under `name`: from now on [`scrub`] replaces it. Registering the same
/// value again is harmless.
pub fn register(name: &str, value: &str) -> Result<(), TooShort> {
    let chars = value.chars().count();
    if chars < MIN_SECRET_CHARS || value.trim().chars().count() < MIN_SECRET_CHARS {
        return Err(TooShort {
            name: name.to_string(),
            chars,
        });
    }
    let mut forms = vec![
        value.to_string(),
        json_escaped(value),
        // In a URL or a form body (a request line in a log, curl's output).
        percent_encoded(value, false),
        percent_encoded(value, true),
    ];
    let debug = format!("{value:?}");
    forms.push(debug[1..debug.len() - 1].to_string());
    forms.sort();
    forms.dedup();
    let mut known = KNOWN.write().unwrap_or_else(|p| p.into_inner());
    for form in forms {
        if !known.iter().any(|k| k.form == form) {
            known.push(Known {
                form,
                name: name.to_string(),
            });
        }
    }
    // Longest first: a value that contains another is replaced whole.
    known.sort_by_key(|k| std::cmp::Reverse(k.form.len()));
    ANY.store(true, Ordering::Release);
    Ok(())
}

/// Whether any secret is known (nothing to scrub otherwise).
pub fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// `text` with every known secret value replaced by `<secret NAME>`; borrowed when nothing
/// had to change.
pub fn scrub(text: &str) -> Cow<'_, str> {
    if !any() {
        return Cow::Borrowed(text);
    }
    let known = KNOWN.read().unwrap_or_else(|p| p.into_inner());
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    for k in known.iter() {
        if out.contains(k.form.as_str()) {
            out = Cow::Owned(out.replace(k.form.as_str(), &placeholder(&k.name)));
        }
    }
    out
}

/// [`scrub`] in place.
pub fn scrub_string(text: &mut String) {
    if let Cow::Owned(clean) = scrub(text) {
        *text = clean;
    }
}

/// [`scrub`] for UTF-8 bytes about to be written (a file, a JSON line); other bytes are kept.
pub fn scrub_bytes(bytes: Vec<u8>) -> Vec<u8> {
    if !any() {
        return bytes;
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) => match scrub(text) {
            Cow::Borrowed(_) => bytes,
            Cow::Owned(clean) => clean.into_bytes(),
        },
        Err(_) => bytes,
    }
}

/// Whether `text` holds a known value in any of its forms.
pub fn contains_secret(text: &str) -> bool {
    matches!(scrub(text), Cow::Owned(_))
}

/// The value percent-encoded as `encodeURIComponent` does, or (`form`) as a form body does
/// (`application/x-www-form-urlencoded`: a space is `+`).
fn percent_encoded(value: &str, form: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b'!' | b'\'' | b'(' | b')' | b'*' if !form => out.push(b as char),
            b'*' if form => out.push('*'),
            b' ' if form => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The value as it appears between the quotes of a JSON string.
fn json_escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_their_quoted_forms_are_replaced() {
        register("DB_PASS", "s3cr\"et-\\value").unwrap();
        let raw = "connect with s3cr\"et-\\value now";
        assert_eq!(scrub(raw), "connect with <secret DB_PASS> now");
        let json = serde_json::to_string(&raw).unwrap();
        assert_eq!(scrub(&json), "\"connect with <secret DB_PASS> now\"");
        let debug = format!("{raw:?}");
        assert!(!scrub(&debug).contains("et-"), "{}", scrub(&debug));
        assert!(matches!(scrub("nothing here"), Cow::Borrowed(_)));
        assert!(contains_secret(raw) && !contains_secret("s3cr"));
    }

    #[test]
    fn values_in_urls_and_form_bodies_are_replaced() {
        register("FORM_VALUE", "p@ss w0rd!").unwrap();
        assert_eq!(
            scrub("POST /login user=a&pass=p%40ss+w0rd%21"),
            "POST /login user=a&pass=<secret FORM_VALUE>"
        );
        assert_eq!(
            scrub("GET /?q=p%40ss%20w0rd!"),
            "GET /?q=<secret FORM_VALUE>"
        );
    }

    #[test]
    fn a_longer_value_holding_a_shorter_one_is_replaced_whole() {
        register("SHORTER", "hunter22x").unwrap();
        register("LONGER", "hunter22x-and-more").unwrap();
        assert_eq!(
            scrub("a hunter22x-and-more b hunter22x"),
            "a <secret LONGER> b <secret SHORTER>"
        );
    }

    #[test]
    fn short_values_are_refused() {
        let err = register("PIN", "1234").unwrap_err();
        assert_eq!(err.chars, 4);
        assert!(err.to_string().contains("shorter than 6"), "{err}");
        assert!(register("SPACES", "  ab   ").is_err());
        assert!(!contains_secret("1234"));
    }
}
