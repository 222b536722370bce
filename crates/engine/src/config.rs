//! The deployment's settings as the engine receives them: plain values, read once by the
//! binary (files, environment) and applied to every call. Nothing here does anything; the
//! modules that act on a setting import it from here, so settings sit below every operation.

use std::time::Duration;

use deskpilot_types::Rect;

use crate::coords::ImageBudget;
use crate::guard::SafetyConfig;
use crate::pipeline::ImageFormat;

/// Deployment settings the engine applies to every call.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// Default image budget.
    pub budget: ImageBudget,
    /// Default encoding.
    pub format: ImageFormat,
    /// Physical rectangles painted black in every capture. Set by the deployment, never by a tool argument.
    pub mask_regions: Vec<Rect>,
    /// Blocklist, dry run and policy switches for mutating actions.
    pub safety: SafetyConfig,
    /// The screen outline screenshots can carry (`uiSummary`).
    pub outline: OutlineConfig,
    /// The app-skill library and its hint line (`skills`, `skillsDir`, `skillsHint`).
    pub skills: SkillsSettings,
    /// `hitTest`: what a pointer action does with a covered point when the call does not say.
    pub hit_test: HitTestMode,
    /// `coordinates: physical`: x/y are screen pixels when the call does not say.
    pub physical_coordinates: bool,
    /// `requestTimeoutMs`: the longest a desktop call may take before the surface gives up
    /// (`None`: the profile's default).
    pub request_timeout: Option<Duration>,
    /// `screenshotTimeoutMs`: the same for captures.
    pub screenshot_timeout: Option<Duration>,
    /// How screenshots reach the client (`screenshot.inline`, `screenshot.saveToDisk`).
    pub images: ImageDelivery,
    /// What deskpilot remembers of this desktop (`memory`, `memoryDir`, `memoryNeverRemember`,
    /// `memoryAliases`).
    pub memory: MemorySettings,
    /// Named secrets: the file, the keyring switch and each secret's scope (`secretsFile`,
    /// `secretsKeyring`, `[secrets.NAME]`, `--secrets`).
    pub secrets: crate::secrets::SecretsSettings,
}

/// Deployment settings of memory, defined beside it (off by default).
pub use deskpilot_memory::MemorySettings;

/// How a profile hands screenshots to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageDelivery {
    /// The client takes image blocks (`screenshot.inline`, default true).
    pub inline: bool,
    /// Where the client takes no image blocks, write the bytes to a per-user temporary
    /// directory and say where (`screenshot.saveToDisk`, default true; dsh-computer-use's `savedPath`).
    pub save_to_disk: bool,
    /// A profile that serves resources answers with a `resource_link` to
    /// `deskpilot://screenshot/{id}` in place of the image (`images = "link"`, `serve --images
    /// link`; default false: `inline`).
    pub links: bool,
}

impl Default for ImageDelivery {
    fn default() -> Self {
        ImageDelivery {
            inline: true,
            save_to_disk: true,
            links: false,
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            budget: ImageBudget::default(),
            format: ImageFormat::Jpeg { quality: 80 },
            mask_regions: Vec::new(),
            safety: SafetyConfig::default(),
            outline: OutlineConfig::default(),
            skills: SkillsSettings::default(),
            hit_test: HitTestMode::Fail,
            physical_coordinates: false,
            request_timeout: None,
            screenshot_timeout: None,
            images: ImageDelivery::default(),
            memory: MemorySettings::default(),
            secrets: Default::default(),
        }
    }
}

/// What the hit test does with a point that would land on the wrong window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HitTestMode {
    /// Refuse the action (default).
    #[default]
    Fail,
    /// Act, but say what is under the point.
    Warn,
    /// Do not check (points off every monitor are still refused).
    Off,
}

/// How much outline a screenshot carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutlineMode {
    /// No outline.
    #[default]
    None,
    /// The interactive controls (and labels with text), flat.
    Summary,
    /// Every named element, indented by depth.
    Tree,
}

impl std::str::FromStr for OutlineMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(OutlineMode::None),
            "summary" => Ok(OutlineMode::Summary),
            "tree" => Ok(OutlineMode::Tree),
            other => Err(format!("\"{other}\" is not one of none, summary, tree")),
        }
    }
}

/// The deployment's outline settings (`uiSummary`, `uiSummaryMaxNodes`, `uiSummaryMaxChars`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlineConfig {
    /// `None` leaves the choice to the profile (`deskpilot`: none; `dsh`: summary).
    pub mode: Option<OutlineMode>,
    pub max_nodes: usize,
    pub max_chars: usize,
}

impl Default for OutlineConfig {
    fn default() -> Self {
        OutlineConfig {
            mode: None,
            max_nodes: 60,
            max_chars: 4000,
        }
    }
}

/// Deployment settings: `skills`, `skillsDir`, `skillsHint`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillsSettings {
    pub library: deskpilot_skills::SkillsConfig,
    /// `skillsHint: false` keeps the library but drops the hint line.
    pub no_hint: bool,
}
