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

use std::path::{Path, PathBuf};

use deskpilot_engine::coords::ImageBudget;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{EngineConfig, OverlayMode};
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

/// The engine configuration from a parsed file and an environment lookup.
fn from_table(
    table: &Table,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> EngineConfig {
    let mut config = EngineConfig::default();
    for (key, value) in table {
        match key.as_str() {
            "screenshot"
            | "maskRegions"
            | "dryRun"
            | "blocklist"
            | "allowLaunch"
            | "allowCloseWindow"
            | "overlay"
            | "overlayOpacity"
            | "overlayMessage"
            | "escStop"
            | "requireApproval"
            | "idleDisarmMs"
            | "actionDelayMs"
            | "uiSummary"
            | "uiSummaryMaxNodes"
            | "uiSummaryMaxChars"
            | "skills"
            | "skillsDir"
            | "skillsHint"
            | "enabled"
            | "coordinates"
            | "requestTimeoutMs"
            | "screenshotTimeoutMs"
            | "hitTest"
            | "cursor"
            | "memory"
            | "memoryDir"
            | "memoryNeverRemember"
            | "memoryAliases" => {}
            k if NOT_YET.contains(&k) => warnings.push(format!(
                "config key {k} is not supported by this build yet and has no effect"
            )),
            k => warnings.push(format!("unknown config key {k} (= {value}) ignored")),
        }
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
        match key.as_str() {
            "maxWidth" | "maxPixels" | "format" | "jpegQuality" | "saveToDisk" | "inline" => {}
            _ => warnings.push(format!("unknown config key screenshot.{key} ignored")),
        }
    }
    let budget = ImageBudget::default();
    let int = |name: &str,
               env_name: &str,
               range: std::ops::RangeInclusive<i64>,
               default: i64,
               warnings: &mut Vec<String>| {
        let (raw, from) = match env(env_name) {
            Some(v) => (
                Some(v.trim().parse::<i64>().map_err(|_| v)),
                env_name.to_string(),
            ),
            None => (
                shot.get(name)
                    .map(|v| v.as_integer().ok_or_else(|| v.to_string())),
                format!("screenshot.{name}"),
            ),
        };
        match raw {
            None => default,
            Some(Ok(v)) if range.contains(&v) => v,
            Some(Ok(v)) => {
                warnings.push(format!(
                    "{from} = {v} is outside {}..={}; using the default {default}",
                    range.start(),
                    range.end()
                ));
                default
            }
            Some(Err(v)) => {
                warnings.push(format!(
                    "{from} = {v} is not an integer; using the default {default}"
                ));
                default
            }
        }
    };
    let shot_flag = |key: &str, env_name: &str, default: bool, warnings: &mut Vec<String>| {
        let (raw, from) = match env(env_name) {
            Some(v) => (v.trim().to_ascii_lowercase(), env_name.to_string()),
            None => match shot.get(key) {
                None => return default,
                Some(Value::Boolean(b)) => return *b,
                Some(other) => (other.to_string(), format!("screenshot.{key}")),
            },
        };
        match raw.as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => {
                warnings.push(format!(
                    "{from} = {raw} is not true or false; using the default {default}"
                ));
                default
            }
        }
    };
    config.images.save_to_disk = shot_flag(
        "saveToDisk",
        "DESKPILOT_SCREENSHOT_SAVE_TO_DISK",
        true,
        warnings,
    );
    config.images.inline = shot_flag("inline", "DESKPILOT_SCREENSHOT_INLINE", true, warnings);
    config.budget.max_width = int(
        "maxWidth",
        "DESKPILOT_SCREENSHOT_MAX_WIDTH",
        64..=8192,
        budget.max_width as i64,
        warnings,
    ) as u32;
    config.budget.max_pixels = int(
        "maxPixels",
        "DESKPILOT_SCREENSHOT_MAX_PIXELS",
        65_536..=16_777_216,
        budget.max_pixels as i64,
        warnings,
    ) as u64;
    let quality = int(
        "jpegQuality",
        "DESKPILOT_SCREENSHOT_JPEG_QUALITY",
        10..=100,
        80,
        warnings,
    ) as u8;
    let format = env("DESKPILOT_SCREENSHOT_FORMAT")
        .map(|v| (v, "DESKPILOT_SCREENSHOT_FORMAT".to_string()))
        .or_else(|| {
            shot.get("format").map(|v| {
                (
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    "screenshot.format".to_string(),
                )
            })
        });
    config.format = match format {
        None => ImageFormat::Jpeg { quality },
        Some((v, from)) => match v.trim().to_ascii_lowercase().as_str() {
            "jpeg" | "jpg" => ImageFormat::Jpeg { quality },
            "png" => ImageFormat::Png,
            _ => {
                warnings.push(format!(
                    "{from} = {v} is not jpeg or png; using the default jpeg"
                ));
                ImageFormat::Jpeg { quality }
            }
        },
    };
    let flag = |key: &str, env_name: &str, default: bool, warnings: &mut Vec<String>| {
        if let Some(v) = env(env_name) {
            return match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    warnings.push(format!(
                        "{env_name} = {v} is not true or false; using the default {default}"
                    ));
                    default
                }
            };
        }
        match table.get(key) {
            None => default,
            Some(Value::Boolean(b)) => *b,
            Some(other) => {
                warnings.push(format!(
                    "{key} = {other} is not true or false; using the default {default}"
                ));
                default
            }
        }
    };
    config.safety.dry_run = flag("dryRun", "DESKPILOT_DRY_RUN", false, warnings);
    config.safety.allow_launch = flag("allowLaunch", "DESKPILOT_ALLOW_LAUNCH", true, warnings);
    config.safety.allow_close_window = flag(
        "allowCloseWindow",
        "DESKPILOT_ALLOW_CLOSE_WINDOW",
        true,
        warnings,
    );
    config.safety.esc_stop = flag("escStop", "DESKPILOT_ESC_STOP", true, warnings);
    let choice = |key: &str,
                  env_name: &str,
                  options: &[&'static str],
                  default: &'static str,
                  warnings: &mut Vec<String>|
     -> &'static str {
        let (raw, from) = match env(env_name) {
            Some(v) => (v, env_name.to_string()),
            None => match table.get(key) {
                None => return default,
                Some(v) => (
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    key.to_string(),
                ),
            },
        };
        let wanted = raw.trim().to_ascii_lowercase();
        match options.iter().find(|o| **o == wanted) {
            Some(o) => o,
            None => {
                warnings.push(format!(
                    "{from} = {raw} is not one of {}; using the default {default}",
                    options.join(", ")
                ));
                default
            }
        }
    };
    config.safety.overlay = match choice(
        "overlay",
        "DESKPILOT_OVERLAY",
        &["auto", "always", "never"],
        "auto",
        warnings,
    ) {
        "always" => OverlayMode::Always,
        "never" => OverlayMode::Never,
        _ => OverlayMode::Auto,
    };
    config.safety.require_approval = choice(
        "requireApproval",
        "DESKPILOT_REQUIRE_APPROVAL",
        &["never", "mutating"],
        "never",
        warnings,
    ) == "mutating";
    let millis = |key: &str,
                  range: std::ops::RangeInclusive<i64>,
                  default: i64,
                  warnings: &mut Vec<String>| {
        let v = match table.get(key) {
            None => default,
            Some(Value::Integer(v)) if range.contains(v) => *v,
            Some(other) => {
                warnings.push(format!(
                    "{key} = {other} is not an integer in {}..={}; using the default {default}",
                    range.start(),
                    range.end()
                ));
                default
            }
        };
        std::time::Duration::from_millis(v as u64)
    };
    if table.contains_key("uiSummary") || env("DESKPILOT_UI_SUMMARY").is_some() {
        config.outline.mode = Some(
            match choice(
                "uiSummary",
                "DESKPILOT_UI_SUMMARY",
                &["none", "summary", "tree"],
                "none",
                warnings,
            ) {
                "summary" => deskpilot_engine::OutlineMode::Summary,
                "tree" => deskpilot_engine::OutlineMode::Tree,
                _ => deskpilot_engine::OutlineMode::None,
            },
        );
    }
    let count = |key: &str,
                 range: std::ops::RangeInclusive<i64>,
                 default: usize,
                 warnings: &mut Vec<String>| match table.get(key) {
        None => default,
        Some(Value::Integer(v)) if range.contains(v) => *v as usize,
        Some(other) => {
            warnings.push(format!(
                "{key} = {other} is not an integer in {}..={}; using the default {default}",
                range.start(),
                range.end()
            ));
            default
        }
    };
    config.skills.library.enabled = flag("skills", "DESKPILOT_SKILLS", true, warnings);
    config.skills.no_hint = !flag("skillsHint", "DESKPILOT_SKILLS_HINT", true, warnings);
    match table.get("skillsDir") {
        None => {}
        Some(Value::String(d)) if !d.trim().is_empty() => {
            config.skills.library.dir = Some(PathBuf::from(d.trim()));
        }
        Some(other) => warnings.push(format!(
            "skillsDir = {other} is not a directory path; using the default"
        )),
    }
    if let Some(d) = env("DESKPILOT_SKILLS_DIR").filter(|d| !d.trim().is_empty()) {
        config.skills.library.dir = Some(PathBuf::from(d.trim()));
    }
    memory(&mut config, table, env, warnings);
    config.outline.max_nodes = count("uiSummaryMaxNodes", 1..=5000, 60, warnings);
    config.outline.max_chars = count("uiSummaryMaxChars", 200..=100_000, 4000, warnings);
    config.hit_test = match choice(
        "hitTest",
        "DESKPILOT_HIT_TEST",
        &["fail", "warn", "off"],
        "fail",
        warnings,
    ) {
        "warn" => deskpilot_engine::HitTestMode::Warn,
        "off" => deskpilot_engine::HitTestMode::Off,
        _ => deskpilot_engine::HitTestMode::Fail,
    };
    config.safety.cursor = deskpilot_backend::PointerLook::parse(choice(
        "cursor",
        "DESKPILOT_CURSOR",
        &["agent", "halo", "off"],
        "agent",
        warnings,
    ))
    .unwrap_or_default();
    config.physical_coordinates = choice(
        "coordinates",
        "DESKPILOT_COORDINATES",
        &["image", "physical"],
        "image",
        warnings,
    ) == "physical";
    if table.contains_key("requestTimeoutMs") {
        config.request_timeout = Some(millis(
            "requestTimeoutMs",
            1_000..=600_000,
            20_000,
            warnings,
        ));
    }
    if table.contains_key("screenshotTimeoutMs") {
        config.screenshot_timeout = Some(millis(
            "screenshotTimeoutMs",
            1_000..=600_000,
            30_000,
            warnings,
        ));
    }
    config.safety.idle_disarm = millis("idleDisarmMs", 0..=3_600_000, 60_000, warnings);
    config.safety.action_delay = millis("actionDelayMs", 0..=5_000, 60, warnings);
    config.safety.overlay_opacity = match table.get("overlayOpacity") {
        None => 0.85,
        Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
            Some(f) if (0.05..=1.0).contains(&f) => f as f32,
            _ => {
                warnings.push(format!(
                    "overlayOpacity = {v} is not a number in 0.05..=1; using the default 0.85"
                ));
                0.85
            }
        },
    };
    match table.get("overlayMessage") {
        None => {}
        Some(Value::String(m)) if !m.trim().is_empty() => {
            config.safety.overlay_message = m.trim().to_string();
        }
        Some(other) => warnings.push(format!(
            "overlayMessage = {other} is not a non-empty string; using the default"
        )),
    }
    config.safety.blocklist = match table.get("blocklist") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i.as_str() {
                Some(s) if !s.trim().is_empty() => Some(s.to_string()),
                _ => {
                    warnings.push(format!(
                        "blocklist entry {i} is not a non-empty string; ignored"
                    ));
                    None
                }
            })
            .collect(),
        Some(other) => {
            warnings.push(format!(
                "blocklist must be an array of strings, not {other}; nothing is blocked"
            ));
            Vec::new()
        }
    };
    config.mask_regions = match table.get("maskRegions") {
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
    config
}

/// `memory` (default on), `memoryDir` / `DESKPILOT_MEMORY_DIR` (default: the platform's state
/// directory), `memoryNeverRemember` (process or class names) and `memoryAliases` (arrays of
/// names for one app).
fn memory(
    config: &mut EngineConfig,
    table: &Table,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) {
    let m = &mut config.memory;
    m.enabled = match (
        env("DESKPILOT_MEMORY").as_deref().map(str::trim),
        table.get("memory"),
    ) {
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
    m.dir = match table.get("memoryDir") {
        None => None,
        Some(Value::String(d)) if !d.trim().is_empty() => Some(PathBuf::from(d.trim())),
        Some(other) => {
            warnings.push(format!(
                "memoryDir = {other} is not a directory path; using the default"
            ));
            None
        }
    };
    if let Some(d) = env("DESKPILOT_MEMORY_DIR").filter(|d| !d.trim().is_empty()) {
        m.dir = Some(PathBuf::from(d.trim()));
    }
    if m.dir.is_none() {
        m.dir = deskpilot_engine::default_dir(deskpilot_engine::PathConvention::native(), |k| {
            env(k).map(Into::into)
        });
    }
    let strings = |key: &str, v: &Value, warnings: &mut Vec<String>| -> Vec<String> {
        match v {
            Value::Array(items) => items
                .iter()
                .filter_map(|i| match i.as_str() {
                    Some(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
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
                    "{key} must be an array of strings, not {other}; ignored"
                ));
                Vec::new()
            }
        }
    };
    if let Some(v) = table.get("memoryNeverRemember") {
        m.never_remember = strings("memoryNeverRemember", v, warnings);
    }
    match table.get("memoryAliases") {
        None => {}
        Some(Value::Array(groups)) => {
            for g in groups {
                let group = strings("memoryAliases", g, warnings);
                if group.len() >= 2 {
                    m.aliases.push(group);
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
        assert_eq!(c.hit_test, deskpilot_engine::HitTestMode::Fail);
        assert_eq!(c.request_timeout, Some(std::time::Duration::from_secs(20)));
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
        assert_eq!(c.hit_test, deskpilot_engine::HitTestMode::Warn);
        assert!(c.physical_coordinates);
        assert_eq!(c.request_timeout, Some(std::time::Duration::from_secs(45)));
        assert_eq!(
            c.screenshot_timeout,
            Some(std::time::Duration::from_secs(2))
        );
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
        assert_eq!(s.idle_disarm, std::time::Duration::from_millis(1500));
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
        assert_eq!(s.idle_disarm, std::time::Duration::from_secs(60));
        assert_eq!(s.action_delay, std::time::Duration::from_millis(60));
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(
            w.iter()
                .any(|w| w.contains("requireApproval = always is not one of never, mutating")),
            "{w:?}"
        );
    }
}
