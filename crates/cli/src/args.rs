//! The clap arguments several commands share: where the desktop comes from
//! ([`DesktopArgs`]: a virtual display, its size) and which tools a profile exposes
//! ([`ToolArgs`]). The commands themselves and their own options stay in `main.rs` and the
//! module of each command; what a flag does is up to the command that reads it.

/// When to start a private headless desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VirtualDisplayMode {
    /// Always start one.
    Always,
    /// Start one only when no display can be reached.
    Auto,
}

/// Options shared by every command that touches the desktop.
#[derive(Debug, Clone, clap::Args)]
pub struct DesktopArgs {
    /// Start a private headless desktop (Xvfb + openbox + D-Bus + AT-SPI bus) and use it (Linux).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "always")]
    pub virtual_display: Option<VirtualDisplayMode>,
    /// Size of the virtual desktop, WIDTHxHEIGHT.
    #[arg(long, default_value = "1920x1080", value_parser = parse_size)]
    pub screen: (u32, u32),
}

/// How tools hand a screenshot to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Images {
    /// The image in the tool's answer.
    Inline,
    /// A `resource_link` to `deskpilot://screenshot/{id}`, read with `resources/read`.
    Link,
}

/// Tool selection shared by `serve` and `call`.
#[derive(Debug, Clone, clap::Args)]
pub struct ToolArgs {
    /// Tool surface to expose: deskpilot (granular tools), desktopos (DesktopOS), dsh (dsh-computer-use), ui-context (UI Context Protocol).
    #[arg(long, default_value = "deskpilot")]
    pub profile: String,
    /// Expose only these tools or groups (comma-separated).
    #[arg(long, env = "DESKPILOT_TOOLS")]
    pub tools: Option<String>,
    /// Expose only these tools or groups (comma-separated; DesktopOS's spelling, also
    /// DESKTOPOS_TOOLS). Adds to --tools.
    #[arg(long)]
    pub only: Option<String>,
    /// Hide these tools or groups (comma-separated; also DESKTOPOS_TOOLS_EXCLUDE). Exclusion wins.
    #[arg(long, env = "DESKPILOT_TOOLS_EXCLUDE")]
    pub exclude_tools: Option<String>,
    /// Configuration file (TOML, the keys dsh-computer-use reads); default: deskpilot/config.toml in the
    /// platform's config directory. Also DESKPILOT_CONFIG.
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// How tools hand a screenshot to the client: inline (the image in the answer, the
    /// default) or link (a resource_link to deskpilot://screenshot/{id}, for profiles that
    /// serve resources). Wins over `images` in the configuration and DESKPILOT_IMAGES.
    #[arg(long, value_enum)]
    pub images: Option<Images>,
    /// Named secrets for type_secret: a dotenv file (NAME=value lines) only its owner can
    /// read. Also `secretsFile` in the configuration, DESKPILOT_SECRETS_FILE, and one
    /// DESKPILOT_SECRET_<NAME> variable per secret.
    #[arg(long, value_name = "FILE")]
    pub secrets: Option<std::path::PathBuf>,
}

/// `WIDTHxHEIGHT`, each side 64..=16384 pixels.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s}: expected WIDTHxHEIGHT, e.g. 1920x1080"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (64..=16384).contains(n))
    };
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!("{s}: width and height must be 64..=16384")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_width_x_height_within_bounds() {
        assert_eq!(parse_size("1920x1080"), Ok((1920, 1080)));
        assert_eq!(parse_size("800X600"), Ok((800, 600)));
        assert!(parse_size("10x10").unwrap_err().contains("64..=16384"));
        assert!(parse_size("wide").unwrap_err().contains("WIDTHxHEIGHT"));
    }
}
