//! A reader for Windows Shell Link files (`.lnk`, [MS-SHLLINK]) and the Windows command-line
//! splitting rules, in plain Rust so the Start-menu catalog is parsed and tested on every
//! platform.
//!
//! [`ShellLink::parse`] reads the `ShellLinkHeader`, skips the `LinkTargetIDList`, and reads
//! the `LinkInfo` (local or network target), the `StringData` (description, relative path,
//! working directory, arguments, icon location) and the environment-variable extra blocks.
//! It deliberately does not interpret the `LinkTargetIDList` (shell namespace items) or the
//! other extra blocks (property stores, console settings, tracker data): a link whose only
//! target is an item id list has no [`ShellLink::target`].
//!
//! Invariant: every read is bounds-checked; a truncated or hostile file is an [`LnkError`],
//! never a panic, and nothing is allocated beyond the file's own size.
//!
//! [MS-SHLLINK]: https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-shllink/

/// The class id every shell link header carries, 00021401-0000-0000-C000-000000000046, in
/// its on-disk (little-endian) byte order.
const LINK_CLSID: [u8; 16] = [
    0x01, 0x14, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46,
];
const HEADER_SIZE: usize = 0x4C;

const HAS_LINK_TARGET_ID_LIST: u32 = 0x1;
const HAS_LINK_INFO: u32 = 0x2;
const HAS_NAME: u32 = 0x4;
const HAS_RELATIVE_PATH: u32 = 0x8;
const HAS_WORKING_DIR: u32 = 0x10;
const HAS_ARGUMENTS: u32 = 0x20;
const HAS_ICON_LOCATION: u32 = 0x40;
const IS_UNICODE: u32 = 0x80;
const FORCE_NO_LINK_INFO: u32 = 0x100;
const HAS_EXP_STRING: u32 = 0x200;
const HAS_EXP_ICON: u32 = 0x4000;

/// `LinkInfoFlags`: a volume id and `LocalBasePath` are present.
const VOLUME_ID_AND_LOCAL_BASE_PATH: u32 = 0x1;
/// `LinkInfoFlags`: a `CommonNetworkRelativeLink` is present.
const COMMON_NETWORK_RELATIVE_LINK: u32 = 0x2;

const ENVIRONMENT_VARIABLE_BLOCK: u32 = 0xA000_0001;
const ICON_ENVIRONMENT_BLOCK: u32 = 0xA000_0007;
/// Both environment blocks: size, signature, 260 ANSI bytes, 260 UTF-16 units.
const ENVIRONMENT_BLOCK_SIZE: usize = 0x314;

/// Why a file could not be read as a shell link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LnkError {
    /// The file does not start with a shell link header (wrong header size or class id).
    #[error("not a shell link: the header's size or class id is wrong")]
    NotALink,
    /// The file ends inside a structure, or a size or offset in it points past the structure
    /// that holds it.
    #[error("the shell link is cut short or inconsistent in its {structure}")]
    Truncated { structure: &'static str },
}

/// What a shell link says, as read from the file. Paths and strings are as stored: environment
/// variables (`%windir%`) are not expanded here ([`expand_env`] does that).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellLink {
    /// The target from the `LinkInfo`: `LocalBasePath` + `CommonPathSuffix`, or a network
    /// share's name + `CommonPathSuffix` (`None` when there is no `LinkInfo`, or
    /// `ForceNoLinkInfo` says to ignore it).
    pub link_info_target: Option<String>,
    /// The target from the `EnvironmentVariableDataBlock` (`%windir%\system32\notepad.exe`),
    /// when `HasExpString` is set.
    pub env_target: Option<String>,
    /// `NAME_STRING`: the description people see as the tooltip.
    pub description: Option<String>,
    /// `RELATIVE_PATH`: the target relative to the link file.
    pub relative_path: Option<String>,
    /// `WORKING_DIR`.
    pub working_dir: Option<String>,
    /// `COMMAND_LINE_ARGUMENTS`, one string ([`split_command_line`] makes it an argv).
    pub arguments: Option<String>,
    /// `ICON_LOCATION`, or the `IconEnvironmentDataBlock`'s path when `HasExpIcon` is set.
    pub icon_location: Option<String>,
    /// The header's `IconIndex`: which icon inside [`ShellLink::icon_location`].
    pub icon_index: i32,
}

impl ShellLink {
    /// Reads a shell link from the bytes of a `.lnk` file.
    pub fn parse(bytes: &[u8]) -> Result<ShellLink, LnkError> {
        let data = Bytes(bytes);
        let header = "ShellLinkHeader";
        if data.u32(0, header)? as usize != HEADER_SIZE {
            return Err(LnkError::NotALink);
        }
        if data.slice(4, 16, header)? != LINK_CLSID {
            return Err(LnkError::NotALink);
        }
        let flags = data.u32(0x14, header)?;
        let icon_index = data.u32(0x38, header)? as i32;
        data.slice(0, HEADER_SIZE, header)?;
        let mut at = HEADER_SIZE;

        if flags & HAS_LINK_TARGET_ID_LIST != 0 {
            let size = data.u16(at, "LinkTargetIDList")? as usize;
            at += 2;
            data.slice(at, size, "LinkTargetIDList")?;
            at += size;
        }

        let mut link = ShellLink {
            icon_index,
            ..ShellLink::default()
        };
        if flags & HAS_LINK_INFO != 0 {
            let size = data.u32(at, "LinkInfo")? as usize;
            let info = Bytes(data.slice(at, size, "LinkInfo")?);
            if flags & FORCE_NO_LINK_INFO == 0 {
                link.link_info_target = link_info_target(info)?;
            }
            at += size;
        }

        let unicode = flags & IS_UNICODE != 0;
        for (flag, slot) in [
            (HAS_NAME, &mut link.description),
            (HAS_RELATIVE_PATH, &mut link.relative_path),
            (HAS_WORKING_DIR, &mut link.working_dir),
            (HAS_ARGUMENTS, &mut link.arguments),
            (HAS_ICON_LOCATION, &mut link.icon_location),
        ] {
            if flags & flag != 0 {
                let (text, next) = data.string_data(at, unicode)?;
                *slot = Some(text);
                at = next;
            }
        }

        // ExtraData: blocks until the TerminalBlock (a size below 4).
        loop {
            let size = data.u32(at, "ExtraData")? as usize;
            if size < 4 {
                break;
            }
            let block = Bytes(data.slice(at, size, "ExtraData")?);
            let signature = block.u32(4, "ExtraData")?;
            match signature {
                ENVIRONMENT_VARIABLE_BLOCK if flags & HAS_EXP_STRING != 0 => {
                    link.env_target = environment_block(block)?;
                }
                ICON_ENVIRONMENT_BLOCK if flags & HAS_EXP_ICON != 0 => {
                    if let Some(icon) = environment_block(block)? {
                        link.icon_location = Some(icon);
                    }
                }
                _ => {}
            }
            at += size;
        }
        Ok(link)
    }

    /// The file the link starts: the environment-block target with its variables expanded
    /// when every one of them is set (what the shell prefers, since it survives a different
    /// Windows directory), else the `LinkInfo` target, else the environment-block target as
    /// stored. `None` when the link names its target only through its item id list or a
    /// relative path.
    pub fn target(&self, env: impl Fn(&str) -> Option<String>) -> Option<String> {
        let expanded = self.env_target.as_deref().and_then(|t| expand_env(t, &env));
        expanded
            .or_else(|| self.link_info_target.clone())
            .or_else(|| self.env_target.clone())
            .filter(|t| !t.is_empty())
    }
}

/// `LinkInfo`'s target: the local path (Unicode when the header carries its offset) or the
/// network share, each followed by the common path suffix.
fn link_info_target(info: Bytes<'_>) -> Result<Option<String>, LnkError> {
    let what = "LinkInfo";
    let header_size = info.u32(4, what)? as usize;
    let flags = info.u32(8, what)?;
    let local_offset = info.u32(16, what)? as usize;
    let network_offset = info.u32(20, what)? as usize;
    let suffix_offset = info.u32(24, what)? as usize;
    let (local_unicode, suffix_unicode) = if header_size >= 0x24 {
        (info.u32(28, what)? as usize, info.u32(32, what)? as usize)
    } else {
        (0, 0)
    };
    let suffix = if suffix_unicode != 0 {
        info.utf16z(suffix_unicode, what)?
    } else if suffix_offset != 0 {
        info.ansiz(suffix_offset, what)?
    } else {
        String::new()
    };
    if flags & VOLUME_ID_AND_LOCAL_BASE_PATH != 0 {
        let base = if local_unicode != 0 {
            info.utf16z(local_unicode, what)?
        } else {
            info.ansiz(local_offset, what)?
        };
        return Ok(Some(base + &suffix));
    }
    if flags & COMMON_NETWORK_RELATIVE_LINK != 0 {
        let what = "CommonNetworkRelativeLink";
        let size = info.u32(network_offset, what)? as usize;
        let link = Bytes(info.slice(network_offset, size, what)?);
        let name_offset = link.u32(8, what)? as usize;
        let name = if name_offset > 0x14 {
            link.utf16z(link.u32(0x14, what)? as usize, what)?
        } else {
            link.ansiz(name_offset, what)?
        };
        if suffix.is_empty() || name.ends_with('\\') {
            return Ok(Some(name + &suffix));
        }
        return Ok(Some(format!("{name}\\{suffix}")));
    }
    Ok(None)
}

/// An `EnvironmentVariableDataBlock` or `IconEnvironmentDataBlock`'s path: the Unicode field
/// when it holds one, else the ANSI field.
fn environment_block(block: Bytes<'_>) -> Result<Option<String>, LnkError> {
    let what = "EnvironmentVariableDataBlock";
    if block.0.len() != ENVIRONMENT_BLOCK_SIZE {
        return Err(LnkError::Truncated { structure: what });
    }
    let unicode = block.utf16z(8 + 260, what)?;
    let text = if unicode.is_empty() {
        block.ansiz(8, what)?
    } else {
        unicode
    };
    Ok(Some(text).filter(|t| !t.is_empty()))
}

/// Bounds-checked little-endian reads.
#[derive(Clone, Copy)]
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(self, at: usize, len: usize, structure: &'static str) -> Result<&'a [u8], LnkError> {
        at.checked_add(len)
            .and_then(|end| self.0.get(at..end))
            .ok_or(LnkError::Truncated { structure })
    }

    fn u16(self, at: usize, structure: &'static str) -> Result<u16, LnkError> {
        let b = self.slice(at, 2, structure)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(self, at: usize, structure: &'static str) -> Result<u32, LnkError> {
        let b = self.slice(at, 4, structure)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string in the system code page, read as Latin-1 (the file does not
    /// say which code page wrote it; modern links are Unicode anyway).
    fn ansiz(self, at: usize, structure: &'static str) -> Result<String, LnkError> {
        let rest = self.0.get(at..).ok_or(LnkError::Truncated { structure })?;
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(LnkError::Truncated { structure })?;
        Ok(rest[..end].iter().map(|&b| char::from(b)).collect())
    }

    /// A NUL-terminated UTF-16LE string (unpaired surrogates become U+FFFD).
    fn utf16z(self, at: usize, structure: &'static str) -> Result<String, LnkError> {
        let rest = self.0.get(at..).ok_or(LnkError::Truncated { structure })?;
        let mut units = Vec::new();
        for pair in rest.chunks_exact(2) {
            let unit = u16::from_le_bytes([pair[0], pair[1]]);
            if unit == 0 {
                return Ok(String::from_utf16_lossy(&units));
            }
            units.push(unit);
        }
        Err(LnkError::Truncated { structure })
    }

    /// One `StringData` entry at `at` (a count of characters, then the characters, not
    /// terminated), and where the next one starts. The text ends at a NUL inside it: Wine
    /// counts (and writes) the terminator too.
    fn string_data(self, at: usize, unicode: bool) -> Result<(String, usize), LnkError> {
        let structure = "StringData";
        let count = self.u16(at, structure)? as usize;
        let len = if unicode { count * 2 } else { count };
        let raw = self.slice(at + 2, len, structure)?;
        let text = if unicode {
            let units: Vec<u16> = raw
                .chunks_exact(2)
                .map(|p| u16::from_le_bytes([p[0], p[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        } else {
            raw.iter().map(|&b| char::from(b)).collect()
        };
        let text = match text.split_once('\0') {
            Some((before, _)) => before.to_string(),
            None => text,
        };
        Ok((text, at + 2 + len))
    }
}

/// `text` with every `%NAME%` replaced by `env(NAME)`, as `ExpandEnvironmentStrings` does;
/// `None` when a variable it names is not set (the shell would leave it in, and the path would
/// not exist). A `%` with no closing `%`, and the first of `%%`, are kept as they are.
pub fn expand_env(text: &str, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('%') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('%') {
            Some(end) if end > 0 => {
                out.push_str(&env(&after[..end])?);
                rest = &after[end + 1..];
            }
            // The first of `%%`: literal, and the second may open a name.
            Some(_) => {
                out.push('%');
                rest = after;
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// A Windows command line (the arguments part, not the program name) split into arguments the
/// way `CommandLineToArgvW` does: spaces and tabs separate arguments outside quotes; `2n`
/// backslashes before a `"` are `n` backslashes and the quote opens or closes quoting; `2n+1`
/// backslashes before a `"` are `n` backslashes and a literal `"`; backslashes not before a
/// quote are literal; inside quotes `""` is a literal `"` that also ends the quoting, and
/// outside quotes `"""` is a literal `"`.
pub fn split_command_line(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    // An argument has started (so `""` alone is an empty argument).
    let mut started = false;
    // Quotes seen in the current run, as Wine and Windows count them: 1 is "inside quotes".
    let mut quotes = 0u8;
    let mut backslashes = 0usize;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' if quotes == 0 => {
                current.extend(std::iter::repeat_n('\\', backslashes));
                backslashes = 0;
                if started {
                    args.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            '\\' => {
                backslashes += 1;
                started = true;
            }
            '"' => {
                started = true;
                current.extend(std::iter::repeat_n('\\', backslashes / 2));
                if backslashes % 2 == 1 {
                    current.push('"');
                    backslashes = 0;
                    continue;
                }
                backslashes = 0;
                quotes += 1;
                while chars.peek() == Some(&'"') {
                    chars.next();
                    quotes += 1;
                    if quotes == 3 {
                        current.push('"');
                        quotes = 0;
                    }
                }
                if quotes == 2 {
                    quotes = 0;
                }
            }
            other => {
                current.extend(std::iter::repeat_n('\\', backslashes));
                backslashes = 0;
                current.push(other);
                started = true;
            }
        }
    }
    current.extend(std::iter::repeat_n('\\', backslashes));
    if started {
        args.push(current);
    }
    args
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A shell link as the test writer lays it out.
    #[derive(Default)]
    pub(crate) struct Spec<'a> {
        pub local_path: Option<&'a str>,
        /// Write the `LinkInfo` path in both ANSI and Unicode (header size 0x24).
        pub local_unicode: bool,
        pub network: Option<(&'a str, &'a str)>,
        pub env_target: Option<&'a str>,
        pub description: Option<&'a str>,
        pub relative_path: Option<&'a str>,
        pub working_dir: Option<&'a str>,
        pub arguments: Option<&'a str>,
        pub icon_location: Option<&'a str>,
        pub icon_index: i32,
        pub id_list: bool,
        pub ansi_strings: bool,
        /// Count and write each string's terminator too, as Wine does.
        pub nul_counted: bool,
    }

    fn u16le(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    fn u32le(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    fn utf16z(s: &str) -> Vec<u8> {
        s.encode_utf16()
            .chain([0])
            .flat_map(u16::to_le_bytes)
            .collect()
    }

    fn ansiz(s: &str) -> Vec<u8> {
        s.bytes().chain([0]).collect()
    }

    /// The `LinkInfo` structure for a local path (and optionally its Unicode copy) or a
    /// network share, laid out from MS-SHLLINK 2.3.
    fn link_info(spec: &Spec<'_>) -> Vec<u8> {
        let header: usize = if spec.local_unicode { 0x24 } else { 0x1C };
        let mut body = Vec::new();
        let (mut flags, mut volume, mut local, mut network, mut local_u) = (0u32, 0, 0, 0, 0);
        let mut suffix = 0;
        let mut suffix_u = 0;
        if let Some(path) = spec.local_path {
            flags |= VOLUME_ID_AND_LOCAL_BASE_PATH;
            volume = header + body.len();
            // VolumeID: size, drive type (3 = fixed), serial, label offset, empty label.
            u32le(&mut body, 0x11);
            u32le(&mut body, 3);
            u32le(&mut body, 0x1234_5678);
            u32le(&mut body, 0x10);
            body.push(0);
            local = header + body.len();
            body.extend(ansiz(path));
        }
        if let Some((share, _)) = spec.network {
            flags |= COMMON_NETWORK_RELATIVE_LINK;
            network = header + body.len();
            let name = ansiz(share);
            u32le(&mut body, (0x14 + name.len()) as u32);
            u32le(&mut body, 0);
            u32le(&mut body, 0x14);
            u32le(&mut body, 0);
            u32le(&mut body, 0);
            body.extend(name);
        }
        suffix = suffix.max(header + body.len());
        body.extend(ansiz(spec.network.map(|n| n.1).unwrap_or("")));
        if spec.local_unicode {
            if let Some(path) = spec.local_path {
                local_u = header + body.len();
                body.extend(utf16z(path));
            }
            suffix_u = header + body.len();
            body.extend(utf16z(""));
        }
        let mut out = Vec::new();
        u32le(&mut out, (header + body.len()) as u32);
        u32le(&mut out, header as u32);
        u32le(&mut out, flags);
        for offset in [volume, local, network, suffix] {
            u32le(&mut out, offset as u32);
        }
        if spec.local_unicode {
            u32le(&mut out, local_u as u32);
            u32le(&mut out, suffix_u as u32);
        }
        out.extend(body);
        out
    }

    fn environment_block(out: &mut Vec<u8>, signature: u32, path: &str) {
        u32le(out, ENVIRONMENT_BLOCK_SIZE as u32);
        u32le(out, signature);
        let mut ansi = ansiz(path);
        ansi.resize(260, 0);
        out.extend(ansi);
        let mut unicode = utf16z(path);
        unicode.resize(520, 0);
        out.extend(unicode);
    }

    /// A `.lnk` file's bytes, written from MS-SHLLINK for the tests.
    pub(crate) fn write(spec: &Spec<'_>) -> Vec<u8> {
        let mut flags = 0;
        if spec.id_list {
            flags |= HAS_LINK_TARGET_ID_LIST;
        }
        if spec.local_path.is_some() || spec.network.is_some() {
            flags |= HAS_LINK_INFO;
        }
        let strings = [
            (HAS_NAME, spec.description),
            (HAS_RELATIVE_PATH, spec.relative_path),
            (HAS_WORKING_DIR, spec.working_dir),
            (HAS_ARGUMENTS, spec.arguments),
            (HAS_ICON_LOCATION, spec.icon_location),
        ];
        for (flag, value) in strings {
            if value.is_some() {
                flags |= flag;
            }
        }
        if !spec.ansi_strings {
            flags |= IS_UNICODE;
        }
        if spec.env_target.is_some() {
            flags |= HAS_EXP_STRING;
        }
        let mut out = Vec::new();
        u32le(&mut out, HEADER_SIZE as u32);
        out.extend(LINK_CLSID);
        u32le(&mut out, flags);
        u32le(&mut out, 0x20); // FILE_ATTRIBUTE_ARCHIVE
        out.extend([0; 24]); // creation, access and write times
        u32le(&mut out, 0); // file size
        u32le(&mut out, spec.icon_index as u32);
        u32le(&mut out, 1); // SW_SHOWNORMAL
        out.extend([0; 12]); // hot key and reserved
        assert_eq!(out.len(), HEADER_SIZE);
        if spec.id_list {
            // One made-up item (size 6, 4 bytes of data), then the terminating zero size.
            u16le(&mut out, 8);
            u16le(&mut out, 6);
            out.extend([0x1F, 0x50, 0xAA, 0xBB]);
            u16le(&mut out, 0);
        }
        if flags & HAS_LINK_INFO != 0 {
            out.extend(link_info(spec));
        }
        for (_, value) in strings {
            if let Some(text) = value {
                let text = &if spec.nul_counted {
                    format!("{text}\0")
                } else {
                    text.to_string()
                };
                if spec.ansi_strings {
                    u16le(&mut out, text.len() as u16);
                    out.extend(text.bytes());
                } else {
                    let units: Vec<u16> = text.encode_utf16().collect();
                    u16le(&mut out, units.len() as u16);
                    out.extend(units.iter().flat_map(|u| u.to_le_bytes()));
                }
            }
        }
        if let Some(target) = spec.env_target {
            environment_block(&mut out, ENVIRONMENT_VARIABLE_BLOCK, target);
        }
        // A block this reader skips (a made-up KnownFolderDataBlock-sized one), then the end.
        u32le(&mut out, 12);
        u32le(&mut out, 0xA000_000B);
        u32le(&mut out, 0);
        u32le(&mut out, 0);
        out
    }

    fn env(name: &str) -> Option<String> {
        match name.to_ascii_lowercase().as_str() {
            "windir" => Some(r"C:\Windows".into()),
            "programfiles" => Some(r"C:\Program Files".into()),
            _ => None,
        }
    }

    fn notepad() -> Vec<u8> {
        write(&Spec {
            local_path: Some(r"C:\Windows\System32\notepad.exe"),
            local_unicode: true,
            env_target: Some(r"%windir%\system32\notepad.exe"),
            description: Some("Edits text files"),
            relative_path: Some(r"..\..\..\Windows\System32\notepad.exe"),
            working_dir: Some("%HOMEDRIVE%%HOMEPATH%"),
            arguments: Some(r#"/A "C:\My Files\a.txt""#),
            icon_location: Some(r"%windir%\system32\notepad.exe"),
            icon_index: 2,
            id_list: true,
            ..Spec::default()
        })
    }

    #[test]
    fn a_unicode_link_gives_every_field() {
        let link = ShellLink::parse(&notepad()).unwrap();
        assert_eq!(
            link,
            ShellLink {
                link_info_target: Some(r"C:\Windows\System32\notepad.exe".into()),
                env_target: Some(r"%windir%\system32\notepad.exe".into()),
                description: Some("Edits text files".into()),
                relative_path: Some(r"..\..\..\Windows\System32\notepad.exe".into()),
                working_dir: Some("%HOMEDRIVE%%HOMEPATH%".into()),
                arguments: Some(r#"/A "C:\My Files\a.txt""#.into()),
                icon_location: Some(r"%windir%\system32\notepad.exe".into()),
                icon_index: 2,
            }
        );
        assert_eq!(
            link.target(env).as_deref(),
            Some(r"C:\Windows\system32\notepad.exe")
        );
        // An unset variable: the LinkInfo path is used instead.
        assert_eq!(
            link.target(|_| None).as_deref(),
            Some(r"C:\Windows\System32\notepad.exe")
        );
    }

    #[test]
    fn ansi_links_and_network_targets_are_read() {
        let bytes = write(&Spec {
            local_path: Some(r"C:\Tools\old.exe"),
            description: Some("Old tool"),
            arguments: Some("-x"),
            ansi_strings: true,
            ..Spec::default()
        });
        let link = ShellLink::parse(&bytes).unwrap();
        assert_eq!(link.link_info_target.as_deref(), Some(r"C:\Tools\old.exe"));
        assert_eq!(link.description.as_deref(), Some("Old tool"));
        assert_eq!(link.arguments.as_deref(), Some("-x"));
        assert_eq!(link.target(env).as_deref(), Some(r"C:\Tools\old.exe"));

        let bytes = write(&Spec {
            network: Some((r"\\server\apps", r"tool\run.exe")),
            ..Spec::default()
        });
        let link = ShellLink::parse(&bytes).unwrap();
        assert_eq!(
            link.target(env).as_deref(),
            Some(r"\\server\apps\tool\run.exe")
        );

        // Only an item id list: no target this reader can give.
        let bytes = write(&Spec {
            id_list: true,
            description: Some("Control Panel"),
            ..Spec::default()
        });
        assert_eq!(ShellLink::parse(&bytes).unwrap().target(env), None);
    }

    #[test]
    fn strings_whose_count_includes_the_terminator_end_there() {
        // Wine's IShellLink writes "count + 1" characters, the last a NUL.
        for ansi_strings in [false, true] {
            let bytes = write(&Spec {
                local_path: Some(r"C:\windows\system32\notepad.exe"),
                description: Some("deskpilot test fixture"),
                arguments: Some(r#""C:\some dir\log.txt" x"#),
                ansi_strings,
                nul_counted: true,
                ..Spec::default()
            });
            let link = ShellLink::parse(&bytes).unwrap();
            assert_eq!(link.description.as_deref(), Some("deskpilot test fixture"));
            assert_eq!(
                link.arguments.as_deref(),
                Some(r#""C:\some dir\log.txt" x"#)
            );
        }
    }

    #[test]
    fn every_truncation_and_random_bytes_are_errors_not_panics() {
        let bytes = notepad();
        for len in 0..bytes.len() {
            assert!(
                ShellLink::parse(&bytes[..len]).is_err(),
                "a link cut to {len} of {} bytes parsed",
                bytes.len()
            );
        }
        // Hostile sizes and offsets: flip every byte of a valid link in turn.
        for i in 0..bytes.len() {
            for value in [0x00, 0x7F, 0xFF] {
                let mut hostile = bytes.clone();
                hostile[i] = value;
                let _ = ShellLink::parse(&hostile);
            }
        }
        // Random bytes, behind a valid header or not (xorshift, fixed seed).
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..2000 {
            let len = (next() % 600) as usize;
            let mut random: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if round % 2 == 0 && random.len() >= HEADER_SIZE {
                random[..HEADER_SIZE].copy_from_slice(&bytes[..HEADER_SIZE]);
            }
            let _ = ShellLink::parse(&random);
        }
        assert_eq!(ShellLink::parse(b"not a link"), Err(LnkError::NotALink));
    }

    #[test]
    fn a_wrong_header_is_not_a_link() {
        let mut bytes = notepad();
        bytes[4] ^= 1;
        assert_eq!(ShellLink::parse(&bytes), Err(LnkError::NotALink));
        let mut bytes = notepad();
        bytes[0] = 0x4D;
        assert_eq!(ShellLink::parse(&bytes), Err(LnkError::NotALink));
    }

    #[test]
    fn environment_variables_expand_only_when_all_are_set() {
        assert_eq!(
            expand_env(r"%windir%\system32\%%x%", env),
            None,
            "x is not set"
        );
        assert_eq!(
            expand_env(r"%ProgramFiles%\App\app.exe", env).as_deref(),
            Some(r"C:\Program Files\App\app.exe")
        );
        assert_eq!(expand_env("100% sure", env).as_deref(), Some("100% sure"));
        assert_eq!(expand_env("a %% b", env).as_deref(), Some("a %% b"));
        assert_eq!(
            expand_env("%%windir%", env).as_deref(),
            Some(r"%C:\Windows")
        );
    }

    #[test]
    fn command_lines_split_like_command_line_to_argv() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("  a  b\tc ", &["a", "b", "c"]),
            (r#""a b" c"#, &["a b", "c"]),
            (r#""" x"#, &["", "x"]),
            (r#"a\\b c\"#, &[r"a\\b", r"c\"]),
            (r#"a\"b"#, &[r#"a"b"#]),
            (r#"a\\"b c" d"#, &[r"a\b c", "d"]),
            (r#"a\\\"b"#, &[r#"a\"b"#]),
            (r#""C:\Program Files\" x"#, &[r#"C:\Program Files" x"#]),
            (r#""C:\Program Files\\" x"#, &[r"C:\Program Files\", "x"]),
            // Inside quotes a doubled quote is one quote and ends the quoting.
            (r#""a""b c""#, &[r#"a"b"#, "c"]),
            (r#"""" x"#, &[r#"""#, "x"]),
            (r#""""" x"#, &[r#"" x"#]),
            (r#"/A "C:\My Files\a.txt""#, &["/A", r"C:\My Files\a.txt"]),
            ("--name=\"two words\" -v", &["--name=two words", "-v"]),
        ];
        for (line, expect) in cases {
            assert_eq!(split_command_line(line), *expect, "{line}");
        }
    }
}
