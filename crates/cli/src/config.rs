//! The deployment's configuration: a TOML file with dsh-computer-use's keys (camelCase), then
//! environment overrides for the common ones.
//!
//! The file is `--config PATH`, else `DESKPILOT_CONFIG`, else `deskpilot/config.toml` in the
//! platform's config directory (`$XDG_CONFIG_HOME` or `~/.config` on Linux, `%APPDATA%` on
//! Windows); a missing default file is no error. Nothing here fails the boot: an unreadable
//! file, a value out of range, an unknown enum value or an unknown key is reported on stderr and
//! the default is used instead. Keys of dsh-computer-use that this build does not act on yet are named
//! in a warning, so nobody believes a setting protects them when it does not.
//!
//! ```toml
//! maskRegions = [{ x = 0, y = 1040, width = 1920, height = 40 }]
//! [screenshot]
//! maxWidth = 1024
//! format = "png"
//! ```

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use Kind::*;
use deskpilot_backend::PointerLook;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{EngineConfig, HitTestMode, OverlayMode};
use deskpilot_types::Rect;
use toml::{Table, Value};

/// dsh-computer-use keys this build reads but does not act on yet.
const NOT_YET: &[&str] = &[];

/// The configuration and everything worth telling the operator about it.
#[derive(Debug)]
pub struct Loaded {
    pub engine: EngineConfig,
    /// `enabled`: false serves no tools at all.
    pub enabled: bool,
    /// The file that was read, if any.
    pub source: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// The `DESKPILOT_SECRET_<NAME>` variables, taken out of the environment at start.
static ENV_SECRETS: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// Moves every `DESKPILOT_SECRET_<NAME>` variable out of the process environment, so shells,
/// apps and browsers deskpilot starts never inherit one. Call first thing in `main`, while
/// the process has one thread.
pub fn stash_env_secrets() {
    let taken: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with(deskpilot_engine::secrets::ENV_PREFIX))
        .collect();
    for (k, _) in &taken {
        // SAFETY: called at the top of `main`, before any other thread exists.
        unsafe { std::env::remove_var(k) };
    }
    *ENV_SECRETS.lock().unwrap_or_else(|p| p.into_inner()) = taken;
}

/// The variables [`stash_env_secrets`] took (handed over once).
pub fn take_env_secrets() -> Vec<(String, String)> {
    std::mem::take(&mut *ENV_SECRETS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Where the configuration file is looked for when none is named.
fn default_path() -> Option<PathBuf> {
    Some(
        crate::platform::config_dir()?
            .join("deskpilot")
            .join("config.toml"),
    )
}

/// Reads the configuration: the named file (an error to read it is a warning), the default
/// file if it exists, then the environment.
pub fn load(named: Option<&Path>) -> Loaded {
    let mut warnings = Vec::new();
    let named = named
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("DESKPILOT_CONFIG").map(PathBuf::from));
    let (path, must_exist) = match named {
        Some(p) => (Some(p), true),
        None => (default_path(), false),
    };
    let mut table = Table::new();
    let mut source = None;
    if let Some(path) = path {
        match std::fs::read_to_string(&path) {
            Ok(text) => match text.parse::<Table>() {
                Ok(t) => {
                    table = t;
                    source = Some(path);
                }
                Err(e) => warnings.push(format!(
                    "config {}: not valid TOML, using the defaults: {}",
                    path.display(),
                    e.to_string().trim()
                )),
            },
            Err(e) if must_exist || e.kind() != std::io::ErrorKind::NotFound => {
                warnings.push(format!(
                    "config {}: cannot read it, using the defaults: {e}",
                    path.display()
                ))
            }
            Err(_) => {}
        }
    }
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let engine = from_table(&table, &env, &mut warnings);
    let enabled = match table.get("enabled") {
        None => true,
        Some(Value::Boolean(b)) => *b,
        Some(other) => {
            warnings.push(format!(
                "enabled = {other} is not true or false; using true"
            ));
            true
        }
    };
    Loaded {
        engine,
        enabled,
        source,
        warnings,
    }
}

/// One configuration key: its name, the environment variable that overrides it, what its
/// value must be and where it goes ([`Kind`]). [`KEYS`] lists them in the order they are
/// read, which is the order of their warnings.
struct Key {
    /// The TOML key; `screenshot.NAME` is `NAME` in the `[screenshot]` table.
    name: &'static str,
    /// The environment variable that wins over the file.
    env: Option<&'static str>,
    /// Applied only when the file or the environment gives it: the profile's default holds
    /// otherwise.
    only_given: bool,
    kind: Kind,
}

/// What a key's value must be, its default when it is missing or fails the check, and where
/// the value goes. Each kind words its complaint one way, as operators have met it.
enum Kind {
    /// A boolean (the environment also takes 1/0, yes/no, on/off).
    Flag(bool, fn(&mut EngineConfig, bool)),
    /// An integer in the range, the complaint telling "outside" from "not an integer".
    Int(RangeInclusive<i64>, i64, fn(&mut EngineConfig, i64)),
    /// An integer in the range, one complaint for both.
    IntIn(RangeInclusive<i64>, i64, fn(&mut EngineConfig, i64)),
    /// A number in the range.
    Number(RangeInclusive<f64>, f64, fn(&mut EngineConfig, f64)),
    /// One of the options, any case; the first is the default. The complaint lists them, or
    /// says the text given.
    Choice(
        &'static [&'static str],
        Option<&'static str>,
        fn(&mut EngineConfig, &'static str),
    ),
    /// A non-empty string, trimmed; missing or wrong leaves the default.
    Text(fn(&mut EngineConfig, String)),
    /// A directory path; the environment variable, when set, wins after the file is checked.
    Dir(fn(&mut EngineConfig, PathBuf)),
    /// An array of non-empty strings (trimmed when `true`); a wrong entry is dropped, anything
    /// but an array gives none, and the complaint ends with the text given.
    Strings(bool, &'static str, fn(&mut EngineConfig, Vec<String>)),
    /// A key read by its own function (its shape or its wording is its own).
    Own(OwnReader),
}

/// Reads a key of its own shape: the configuration, the file's value, the environment and
/// the warnings.
type OwnReader =
    fn(&mut EngineConfig, Option<&Value>, &dyn Fn(&str) -> Option<String>, &mut Vec<String>);

/// Top-level keys read elsewhere: `enabled` by [`load`].
const ELSEWHERE: &[&str] = &["enabled"];

/// A key of the file alone.
const fn file(name: &'static str, kind: Kind) -> Key {
    Key {
        name,
        env: None,
        only_given: false,
        kind,
    }
}

/// A key the environment variable `env` overrides.
const fn both(name: &'static str, env: &'static str, kind: Kind) -> Key {
    Key {
        env: Some(env),
        ..file(name, kind)
    }
}

/// The key, applied only when given.
const fn given(key: Key) -> Key {
    Key {
        only_given: true,
        ..key
    }
}

/// Every configuration key, in the order they are read.
#[rustfmt::skip]
const KEYS: &[Key] = &[
    both("screenshot.saveToDisk", "DESKPILOT_SCREENSHOT_SAVE_TO_DISK", Flag(true, |c, v| c.images.save_to_disk = v)),
    both("screenshot.inline", "DESKPILOT_SCREENSHOT_INLINE", Flag(true, |c, v| c.images.inline = v)),
    both("images", "DESKPILOT_IMAGES", Choice(&["inline", "link"], None, |c, v| c.images.links = v == "link")),
    // The defaults are ImageBudget::default()'s (a test holds them equal).
    both("screenshot.maxWidth", "DESKPILOT_SCREENSHOT_MAX_WIDTH",
        Int(64..=8192, 1280, |c, v| c.budget.max_width = v as u32)),
    both("screenshot.maxPixels", "DESKPILOT_SCREENSHOT_MAX_PIXELS",
        Int(65_536..=16_777_216, 600_000, |c, v| c.budget.max_pixels = v as u64)),
    // Before `format`, which keeps the quality when it is JPEG.
    both("screenshot.jpegQuality", "DESKPILOT_SCREENSHOT_JPEG_QUALITY",
        Int(10..=100, 80, |c, v| c.format = ImageFormat::Jpeg { quality: v as u8 })),
    both("screenshot.format", "DESKPILOT_SCREENSHOT_FORMAT",
        Choice(&["jpeg", "jpg", "png"], Some("jpeg or png"), |c, v| if v == "png" { c.format = ImageFormat::Png })),
    both("dryRun", "DESKPILOT_DRY_RUN", Flag(false, |c, v| c.safety.dry_run = v)),
    both("allowLaunch", "DESKPILOT_ALLOW_LAUNCH", Flag(true, |c, v| c.safety.allow_launch = v)),
    both("allowCloseWindow", "DESKPILOT_ALLOW_CLOSE_WINDOW", Flag(true, |c, v| c.safety.allow_close_window = v)),
    both("escStop", "DESKPILOT_ESC_STOP", Flag(true, |c, v| c.safety.esc_stop = v)),
    both("overlay", "DESKPILOT_OVERLAY", Choice(&["auto", "always", "never"], None, |c, v| c.safety.overlay = match v {
        "always" => OverlayMode::Always,
        "never" => OverlayMode::Never,
        _ => OverlayMode::Auto,
    })),
    both("requireApproval", "DESKPILOT_REQUIRE_APPROVAL",
        Choice(&["never", "mutating"], None, |c, v| c.safety.require_approval = v == "mutating")),
    given(both("uiSummary", "DESKPILOT_UI_SUMMARY", Choice(&["none", "summary", "tree"], None, |c, v| {
        c.outline.mode = v.parse().ok()
    }))),
    both("skills", "DESKPILOT_SKILLS", Flag(true, |c, v| c.skills.library.enabled = v)),
    both("skillsHint", "DESKPILOT_SKILLS_HINT", Flag(true, |c, v| c.skills.no_hint = !v)),
    both("skillsDir", "DESKPILOT_SKILLS_DIR", Dir(|c, d| c.skills.library.dir = Some(d))),
    both("memory", "DESKPILOT_MEMORY", Own(memory_switch)),
    both("memoryDir", "DESKPILOT_MEMORY_DIR", Dir(|c, d| c.memory.dir = Some(d))),
    file("memoryNeverRemember", Strings(true, "ignored", |c, v| c.memory.never_remember = v)),
    file("memoryAliases", Own(memory_aliases)),
    file("uiSummaryMaxNodes", IntIn(1..=5000, 60, |c, v| c.outline.max_nodes = v as usize)),
    file("uiSummaryMaxChars", IntIn(200..=100_000, 4000, |c, v| c.outline.max_chars = v as usize)),
    both("hitTest", "DESKPILOT_HIT_TEST", Choice(&["fail", "warn", "off"], None, |c, v| c.hit_test = match v {
        "warn" => HitTestMode::Warn,
        "off" => HitTestMode::Off,
        _ => HitTestMode::Fail,
    })),
    both("cursor", "DESKPILOT_CURSOR",
        Choice(&["agent", "halo", "off"], None, |c, v| c.safety.cursor = PointerLook::parse(v).unwrap_or_default())),
    both("coordinates", "DESKPILOT_COORDINATES",
        Choice(&["image", "physical"], None, |c, v| c.physical_coordinates = v == "physical")),
    given(file("requestTimeoutMs", IntIn(1_000..=600_000, 20_000, |c, v| c.request_timeout = Some(millis(v))))),
    given(file("screenshotTimeoutMs", IntIn(1_000..=600_000, 30_000, |c, v| c.screenshot_timeout = Some(millis(v))))),
    file("idleDisarmMs", IntIn(0..=3_600_000, 60_000, |c, v| c.safety.idle_disarm = millis(v))),
    file("actionDelayMs", IntIn(0..=5_000, 60, |c, v| c.safety.action_delay = millis(v))),
    file("overlayOpacity", Number(0.05..=1.0, 0.85, |c, v| c.safety.overlay_opacity = v as f32)),
    file("overlayMessage", Text(|c, v| c.safety.overlay_message = v)),
    file("blocklist", Strings(false, "nothing is blocked", |c, v| c.safety.blocklist = v)),
    file("maskRegions", Own(mask_regions)),
    both("secretsFile", "DESKPILOT_SECRETS_FILE", Text(|c, v| c.secrets.file = Some(PathBuf::from(v)))),
    both("secretsKeyring", "DESKPILOT_SECRETS_KEYRING", Flag(true, |c, v| c.secrets.keyring = v)),
    file("secrets", Own(secret_scopes)),
];

/// Where a value came from: the environment (variable, text) or the file.
enum Given<'a> {
    Env(&'static str, String),
    File(&'a Value),
}

/// The engine configuration from a parsed file and an environment lookup: every row of
/// [`KEYS`] read in turn, after a warning for each key nobody reads.
fn from_table(
    table: &Table,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> EngineConfig {
    let mut config = EngineConfig::default();
    let (top, section): (Vec<&str>, Vec<&str>) = KEYS
        .iter()
        .map(|k| k.name)
        .partition(|n| !n.starts_with(SECTION));
    for (key, value) in table {
        let k = key.as_str();
        if k == "screenshot" || top.contains(&k) || ELSEWHERE.contains(&k) {
            continue;
        }
        warnings.push(if NOT_YET.contains(&k) {
            format!("config key {k} is not supported by this build yet and has no effect")
        } else {
            format!("unknown config key {k} (= {value}) ignored")
        });
    }
    let shot = match table.get("screenshot") {
        Some(Value::Table(t)) => t.clone(),
        Some(other) => {
            warnings.push(format!("config screenshot must be a table, not {other}"));
            Table::new()
        }
        None => Table::new(),
    };
    for key in shot.keys() {
        if !section.contains(&format!("{SECTION}{key}").as_str()) {
            warnings.push(format!("unknown config key screenshot.{key} ignored"));
        }
    }
    for key in KEYS {
        let in_file = match key.name.strip_prefix(SECTION) {
            Some(name) => shot.get(name),
            None => table.get(key.name),
        };
        let in_env = key.env.and_then(|name| Some((name, env(name)?)));
        if key.only_given && in_file.is_none() && in_env.is_none() {
            continue;
        }
        read(key, in_file, in_env, env, &mut config, warnings);
    }
    if config.memory.dir.is_none() {
        config.memory.dir =
            deskpilot_engine::default_dir(deskpilot_engine::PathConvention::native(), |k| {
                env(k).map(Into::into)
            });
    }
    config
}

/// The `[screenshot]` table's prefix in [`Key::name`].
const SECTION: &str = "screenshot.";

/// Reads one key into `config`: the environment's value if it has one, else the file's, else
/// the default; a value that fails the check is named in a warning and the default is used.
fn read(
    key: &Key,
    in_file: Option<&Value>,
    in_env: Option<(&'static str, String)>,
    env: &dyn Fn(&str) -> Option<String>,
    config: &mut EngineConfig,
    warnings: &mut Vec<String>,
) {
    let name = key.name;
    let given = match in_env {
        Some((var, v)) => Some(Given::Env(var, v)),
        None => in_file.map(Given::File),
    };
    match &key.kind {
        Flag(default, set) => set(config, flag(name, given, *default, warnings)),
        Int(range, default, set) => set(config, int(name, given, range, *default, warnings)),
        IntIn(range, default, set) => {
            let v = match in_file {
                Some(Value::Integer(v)) if range.contains(v) => *v,
                None => *default,
                Some(other) => {
                    warnings.push(format!(
                        "{name} = {other} is not an integer in {}..={}; using the default {default}",
                        range.start(),
                        range.end()
                    ));
                    *default
                }
            };
            set(config, v);
        }
        Number(range, default, set) => {
            let number =
                in_file.map(|v| (v, v.as_float().or_else(|| v.as_integer().map(|i| i as f64))));
            let v = match number {
                None => *default,
                Some((_, Some(f))) if range.contains(&f) => f,
                Some((v, _)) => {
                    warnings.push(format!(
                        "{name} = {v} is not a number in {}..={}; using the default {default}",
                        range.start(),
                        range.end()
                    ));
                    *default
                }
            };
            set(config, v);
        }
        Choice(options, expected, set) => {
            set(config, choice(name, given, options, *expected, warnings))
        }
        Text(set) => match in_file {
            None => {}
            Some(Value::String(m)) if !m.trim().is_empty() => set(config, m.trim().to_string()),
            Some(other) => warnings.push(format!(
                "{name} = {other} is not a non-empty string; using the default"
            )),
        },
        Dir(set) => {
            match in_file {
                None => {}
                Some(Value::String(d)) if !d.trim().is_empty() => {
                    set(config, PathBuf::from(d.trim()))
                }
                Some(other) => warnings.push(format!(
                    "{name} = {other} is not a directory path; using the default"
                )),
            }
            if let Some(Given::Env(_, d)) = given {
                set(config, PathBuf::from(d.trim()));
            }
        }
        Strings(trim, otherwise, set) => {
            if let Some(v) = in_file {
                set(config, string_list(name, v, *trim, otherwise, warnings));
            }
        }
        Own(read) => read(config, in_file, env, warnings),
    }
}

/// A [`Flag`]'s value. The `[screenshot]` keys read any value by its text (the file's `1` and
/// `0` count) and echo the environment's value trimmed and in lower case.
fn flag(name: &str, given: Option<Given>, default: bool, warnings: &mut Vec<String>) -> bool {
    let section = name.starts_with(SECTION);
    let (shown, from) = match given {
        None => return default,
        Some(Given::File(Value::Boolean(b))) => return *b,
        Some(Given::File(other)) => (other.to_string(), name),
        Some(Given::Env(var, v)) if section => (v.trim().to_ascii_lowercase(), var),
        Some(Given::Env(var, v)) => match env_bool(&v) {
            Some(b) => return b,
            None => (v, var),
        },
    };
    if let Some(b) = word_bool(&shown).filter(|_| section) {
        return b;
    }
    warnings.push(format!(
        "{from} = {shown} is not true or false; using the default {default}"
    ));
    default
}

/// An [`Int`]'s value.
fn int(
    name: &str,
    given: Option<Given>,
    range: &RangeInclusive<i64>,
    default: i64,
    warnings: &mut Vec<String>,
) -> i64 {
    let (read, from) = match given {
        None => return default,
        Some(Given::Env(var, v)) => (v.trim().parse::<i64>().map_err(|_| v), var),
        Some(Given::File(v)) => (v.as_integer().ok_or_else(|| v.to_string()), name),
    };
    let why = match read {
        Ok(v) if range.contains(&v) => return v,
        Ok(v) => format!("{v} is outside {}..={}", range.start(), range.end()),
        Err(v) => format!("{v} is not an integer"),
    };
    warnings.push(format!("{from} = {why}; using the default {default}"));
    default
}

/// A [`Choice`]'s value: one of `options`, the first when there is none or it is not one.
fn choice(
    name: &str,
    given: Option<Given>,
    options: &[&'static str],
    expected: Option<&str>,
    warnings: &mut Vec<String>,
) -> &'static str {
    let default = options[0];
    let (raw, from) = match given {
        None => return default,
        Some(Given::Env(var, v)) => (v, var),
        Some(Given::File(v)) => (
            v.as_str().map_or_else(|| v.to_string(), str::to_string),
            name,
        ),
    };
    let wanted = raw.trim().to_ascii_lowercase();
    if let Some(o) = options.iter().find(|o| **o == wanted) {
        return o;
    }
    let expected = match expected {
        Some(e) => e.to_string(),
        None => format!("one of {}", options.join(", ")),
    };
    warnings.push(format!(
        "{from} = {raw} is not {expected}; using the default {default}"
    ));
    default
}

/// An environment variable's boolean: 1/true/yes/on or 0/false/no/off, any case.
fn env_bool(v: &str) -> Option<bool> {
    word_bool(&v.trim().to_ascii_lowercase())
}

/// `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`.
fn word_bool(word: &str) -> Option<bool> {
    match word {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn millis(v: i64) -> Duration {
    Duration::from_millis(v as u64)
}

/// The non-empty strings of the array `v` (trimmed when `trim`); a wrong entry is dropped, a
/// value that is no array gives none, each with a warning.
fn string_list(
    key: &str,
    v: &Value,
    trim: bool,
    otherwise: &str,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    match v {
        Value::Array(items) => items
            .iter()
            .filter_map(|i| match i.as_str() {
                Some(s) if !s.trim().is_empty() => {
                    Some(if trim { s.trim() } else { s }.to_string())
                }
                _ => {
                    warnings.push(format!(
                        "{key} entry {i} is not a non-empty string; ignored"
                    ));
                    None
                }
            })
            .collect(),
        other => {
            warnings.push(format!(
                "{key} must be an array of strings, not {other}; {otherwise}"
            ));
            Vec::new()
        }
    }
}

/// `memory` (default on): the environment takes only 1/true/on and 0/false/off.
fn memory_switch(
    config: &mut EngineConfig,
    in_file: Option<&Value>,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) {
    config.memory.enabled = match (env("DESKPILOT_MEMORY").as_deref().map(str::trim), in_file) {
        (Some("0" | "false" | "off"), _) => false,
        (Some("1" | "true" | "on"), _) => true,
        (Some(other), _) => {
            warnings.push(format!(
                "DESKPILOT_MEMORY={other} is not true/false; memory stays on"
            ));
            true
        }
        (None, None) => true,
        (None, Some(Value::Boolean(b))) => *b,
        (None, Some(other)) => {
            warnings.push(format!(
                "memory = {other} is not a boolean; memory stays on"
            ));
            true
        }
    };
}

/// `memoryAliases`: arrays of two names or more for one app.
fn memory_aliases(
    config: &mut EngineConfig,
    in_file: Option<&Value>,
    _env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) {
    match in_file {
        None => {}
        Some(Value::Array(groups)) => {
            for g in groups {
                let group = string_list("memoryAliases", g, true, "ignored", warnings);
                if group.len() >= 2 {
                    config.memory.aliases.push(group);
                } else if !group.is_empty() {
                    warnings.push(format!(
                        "memoryAliases group {g} names one app only once; ignored"
                    ));
                }
            }
        }
        Some(other) => warnings.push(format!(
            "memoryAliases must be an array of arrays of names, not {other}; ignored"
        )),
    }
}

/// `[secrets.NAME]` tables: `windows` and `origins` (arrays of patterns; a key left out does
/// not restrict), `anyField` and `approval` (booleans). A table that does not read right
/// restricts its secret to nothing, and says so: a typo must never widen where a password goes.
fn secret_scopes(
    config: &mut EngineConfig,
    in_file: Option<&Value>,
    _env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) {
    use deskpilot_engine::secrets::{SecretScope, valid_name};
    let Some(value) = in_file else { return };
    let Value::Table(table) = value else {
        warnings.push(format!(
            "secrets must be a table of [secrets.NAME] tables, not {value}; ignored"
        ));
        return;
    };
    for (name, scope) in table {
        if !valid_name(name) {
            warnings.push(format!(
                "[secrets.{name}]: a secret's name is letters, digits and _ (starting with a letter); ignored"
            ));
            continue;
        }
        let nowhere = SecretScope {
            windows: Some(Vec::new()),
            origins: Some(Vec::new()),
            ..SecretScope::default()
        };
        let bad = |why: String, warnings: &mut Vec<String>| {
            warnings.push(format!(
                "[secrets.{name}]: {why}; secret {name} is refused everywhere until this is fixed"
            ));
        };
        let Value::Table(t) = scope else {
            bad(format!("must be a table, not {scope}"), warnings);
            config.secrets.scopes.insert(name.clone(), nowhere);
            continue;
        };
        let mut out = SecretScope::default();
        let mut broken = false;
        for (key, v) in t {
            match (key.as_str(), v) {
                ("windows" | "origins", Value::Array(items))
                    if items
                        .iter()
                        .all(|i| i.as_str().is_some_and(|s| !s.trim().is_empty())) =>
                {
                    let list = items
                        .iter()
                        .filter_map(|i| i.as_str().map(|s| s.trim().to_string()))
                        .collect();
                    if key == "windows" {
                        out.windows = Some(list);
                    } else {
                        out.origins = Some(list);
                    }
                }
                ("anyField", Value::Boolean(b)) => out.any_field = *b,
                ("approval", Value::Boolean(b)) => out.approval = *b,
                ("windows" | "origins", other) => {
                    bad(
                        format!("{key} must be an array of non-empty strings, not {other}"),
                        warnings,
                    );
                    broken = true;
                }
                ("anyField" | "approval", other) => {
                    bad(
                        format!("{key} must be true or false, not {other}"),
                        warnings,
                    );
                    broken = true;
                }
                (other, _) => {
                    bad(
                        format!(
                            "unknown key {other} (known: windows, origins, anyField, approval)"
                        ),
                        warnings,
                    );
                    broken = true;
                }
            }
        }
        config
            .secrets
            .scopes
            .insert(name.clone(), if broken { nowhere } else { out });
    }
}

/// `maskRegions`: an entry that does not parse is NOT masked, and says so.
fn mask_regions(
    config: &mut EngineConfig,
    in_file: Option<&Value>,
    _env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) {
    config.mask_regions = match in_file {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let rect = mask(item);
                if rect.is_none() {
                    warnings.push(format!(
                        "maskRegions[{i}] = {item} needs integer x, y and positive width, height; this region is NOT masked"
                    ));
                }
                rect
            })
            .collect(),
        Some(other) => {
            warnings.push(format!(
                "maskRegions must be an array of {{ x, y, width, height }}, not {other}; nothing is masked"
            ));
            Vec::new()
        }
    };
}

/// A `{ x, y, width, height }` table as a rectangle (width and height above zero).
fn mask(item: &Value) -> Option<Rect> {
    let t = item.as_table()?;
    let get = |k: &str| t.get(k)?.as_integer();
    let (x, y, w, h) = (get("x")?, get("y")?, get("width")?, get("height")?);
    let coord = |v: i64| i32::try_from(v).ok();
    let size = |v: i64| u32::try_from(v).ok().filter(|v| *v > 0);
    Some(Rect::new(coord(x)?, coord(y)?, size(w)?, size(h)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, env: &[(&str, &str)]) -> (EngineConfig, Vec<String>) {
        let table: Table = text.parse().unwrap();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let mut warnings = Vec::new();
        let config = from_table(&table, &lookup, &mut warnings);
        (config, warnings)
    }

    /// A missing key leaves what the engine would choose: the table's defaults are its own.
    #[test]
    fn an_empty_file_is_the_engines_defaults() {
        let (c, w) = parse("", &[]);
        assert!(w.is_empty(), "{w:?}");
        let engine = EngineConfig::default();
        assert_eq!(c.budget, deskpilot_engine::coords::ImageBudget::default());
        assert_eq!(c.format, engine.format);
        assert_eq!(c.safety, engine.safety);
        assert_eq!(c.outline, engine.outline);
        assert_eq!(c.hit_test, engine.hit_test);
    }

    #[test]
    fn dsh_keys_are_read_and_defaults_fill_the_rest() {
        let (c, w) = parse(
            r#"
            maskRegions = [{ x = 0, y = 1040, width = 1920, height = 40 }]
            [screenshot]
            maxWidth = 1024
            format = "png"
            "#,
            &[],
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.budget.max_width, 1024);
        assert_eq!(c.budget.max_pixels, 600_000);
        assert_eq!(c.safety, deskpilot_engine::SafetyConfig::default());
        assert_eq!(c.format, ImageFormat::Png);
        assert_eq!(c.mask_regions, [Rect::new(0, 1040, 1920, 40)]);
    }

    #[test]
    fn bad_values_fall_back_with_a_warning_and_never_fail() {
        let (c, w) = parse(
            r#"
            hitTest = "sometimes"
            cursor = "ring"
            requestTimeoutMs = 5
            colour = "blue"
            maskRegions = [{ x = 0, y = 0, width = -5, height = 10 }, { x = 1, y = 2, width = 3, height = 4 }]
            [screenshot]
            maxWidth = 10
            jpegQuality = "high"
            format = "gif"
            saveToDisk = "sometimes"
            "#,
            &[],
        );
        assert_eq!(c.budget.max_width, 1280);
        assert_eq!(c.hit_test, HitTestMode::Fail);
        assert_eq!(c.request_timeout, Some(Duration::from_secs(20)));
        assert_eq!(c.format, ImageFormat::Jpeg { quality: 80 });
        assert_eq!(c.mask_regions, [Rect::new(1, 2, 3, 4)]);
        let all = w.join("\n");
        for needle in [
            "screenshot.maxWidth = 10 is outside 64..=8192; using the default 1280",
            "not an integer",
            "gif is not jpeg or png",
            "maskRegions[0]",
            "cursor = ring is not one of agent, halo, off; using the default agent",
            "hitTest = sometimes is not one of fail, warn, off; using the default fail",
            "requestTimeoutMs = 5 is not an integer in 1000..=600000; using the default 20000",
            "screenshot.saveToDisk = \"sometimes\" is not true or false; using the default true",
            "unknown config key colour",
        ] {
            assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
        }
    }

    #[test]
    fn call_defaults_timeouts_and_the_master_switch_are_read() {
        let (c, w) = parse(
            r#"
            hitTest = "warn"
            coordinates = "physical"
            requestTimeoutMs = 45000
            screenshotTimeoutMs = 2000
            "#,
            &[],
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.hit_test, HitTestMode::Warn);
        assert!(c.physical_coordinates);
        assert_eq!(c.request_timeout, Some(Duration::from_secs(45)));
        assert_eq!(c.screenshot_timeout, Some(Duration::from_secs(2)));
    }

    #[test]
    fn the_environment_overrides_the_file() {
        let (c, w) = parse(
            "[screenshot]\nmaxWidth = 1024\nformat = \"png\"\n",
            &[
                ("DESKPILOT_SCREENSHOT_MAX_WIDTH", "800"),
                ("DESKPILOT_SCREENSHOT_FORMAT", "jpeg"),
                ("DESKPILOT_SCREENSHOT_JPEG_QUALITY", "55"),
            ],
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.budget.max_width, 800);
        assert_eq!(c.format, ImageFormat::Jpeg { quality: 55 });
        let (c, w) = parse("", &[("DESKPILOT_SCREENSHOT_MAX_WIDTH", "huge")]);
        assert_eq!(c.budget.max_width, 1280);
        assert!(
            w[0].contains("DESKPILOT_SCREENSHOT_MAX_WIDTH = huge"),
            "{w:?}"
        );
    }

    #[test]
    fn memory_keys_defaults_and_overrides() {
        let (c, w) = parse(
            "",
            &[
                ("HOME", "/home/u"),
                ("LOCALAPPDATA", r"C:\Users\u\AppData\Local"),
            ],
        );
        assert!(w.is_empty(), "{w:?}");
        assert!(c.memory.enabled, "memory is on by default");
        let xdg =
            deskpilot_engine::PathConvention::native() == deskpilot_engine::PathConvention::Xdg;
        let home = if xdg {
            "/home/u/.local/state/deskpilot/memory"
        } else {
            r"C:\Users\u\AppData\Local\deskpilot\memory"
        };
        assert_eq!(c.memory.dir.as_deref(), Some(Path::new(home)));
        if xdg {
            let (c, _) = parse("", &[("XDG_STATE_HOME", "/state"), ("HOME", "/home/u")]);
            assert_eq!(
                c.memory.dir.as_deref(),
                Some(Path::new("/state/deskpilot/memory"))
            );
        }
        let (c, w) = parse(
            "memory = false\nmemoryDir = \"/m\"\nmemoryNeverRemember = [\"keepassxc\", 3]\nmemoryAliases = [[\"飞书\", \"feishu\", \"lark\"], [\"solo\"]]\n",
            &[],
        );
        assert!(!c.memory.enabled);
        assert_eq!(c.memory.dir.as_deref(), Some(Path::new("/m")));
        assert_eq!(c.memory.never_remember, ["keepassxc"]);
        assert_eq!(c.memory.aliases, [vec!["飞书", "feishu", "lark"]]);
        assert_eq!(w.len(), 2, "{w:?}");
        let (c, _) = parse(
            "memory = false\nmemoryDir = \"/m\"\n",
            &[("DESKPILOT_MEMORY", "true"), ("DESKPILOT_MEMORY_DIR", "/e")],
        );
        assert!(c.memory.enabled, "the environment wins");
        assert_eq!(c.memory.dir.as_deref(), Some(Path::new("/e")));
    }

    #[test]
    fn safety_keys_and_their_overrides() {
        let (c, w) = parse(
            "dryRun = true\nallowLaunch = false\nblocklist = [\"1Password\", \"\", 3]\n",
            &[("DESKPILOT_ALLOW_CLOSE_WINDOW", "false")],
        );
        assert!(c.safety.dry_run && !c.safety.allow_launch && !c.safety.allow_close_window);
        assert_eq!(c.safety.blocklist, ["1Password"]);
        assert_eq!(w.len(), 2, "{w:?}");
        let (c, _) = parse("dryRun = true\n", &[("DESKPILOT_DRY_RUN", "0")]);
        assert!(!c.safety.dry_run, "the environment wins");
        let (c, w) = parse("dryRun = \"yes\"\n", &[]);
        assert!(
            !c.safety.dry_run && w[0].contains("not true or false"),
            "{w:?}"
        );
    }

    #[test]
    fn guard_keys_and_their_fallbacks() {
        let (c, w) = parse(
            r#"
            overlay = "always"
            overlayOpacity = 0.5
            overlayMessage = "agent at work"
            escStop = false
            requireApproval = "mutating"
            idleDisarmMs = 1500
            actionDelayMs = 0
            "#,
            &[],
        );
        assert!(w.is_empty(), "{w:?}");
        let s = &c.safety;
        assert_eq!(s.overlay, OverlayMode::Always);
        assert_eq!(s.overlay_opacity, 0.5);
        assert_eq!(s.overlay_message, "agent at work");
        assert!(!s.esc_stop && s.require_approval);
        assert_eq!(s.idle_disarm, Duration::from_millis(1500));
        assert!(s.action_delay.is_zero());

        let (c, w) = parse(
            r#"
            overlay = "sometimes"
            overlayOpacity = 3
            requireApproval = "always"
            idleDisarmMs = -1
            actionDelayMs = 99999
            "#,
            &[("DESKPILOT_OVERLAY", "NEVER")],
        );
        let s = &c.safety;
        assert_eq!(s.overlay, OverlayMode::Never, "the environment wins");
        assert!(!s.require_approval);
        assert_eq!(s.overlay_opacity, 0.85);
        assert_eq!(s.idle_disarm, Duration::from_secs(60));
        assert_eq!(s.action_delay, Duration::from_millis(60));
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(
            w.iter()
                .any(|w| w.contains("requireApproval = always is not one of never, mutating")),
            "{w:?}"
        );
    }
}
