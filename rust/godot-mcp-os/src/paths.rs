//! Host path rules as pure logic: how an absolute path is written on each OS,
//! and whether one path lies inside another on that OS's file system.
//!
//! The decision "is this inside the project?" must not be fooled by
//! `C:\Proj\..\PROJ`, by case on a case-insensitive file system, by a `\\?\`
//! verbatim prefix, or by Windows dropping trailing dots and spaces. Each rule
//! is a function of a [`Host`] value, not of the OS the code runs on, so the
//! Windows and macOS rules are unit-tested on Linux.
//!
//! Where folding could make two different-looking names the same file but this
//! code cannot be sure the file system folds them (non-ASCII letters), the
//! answer is [`Containment::Ambiguous`] and callers refuse: a containment
//! decision is derived, never assumed.

use std::fmt;

use unicode_normalization::UnicodeNormalization;

/// How a host spells paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `/` only; `\` is an ordinary character.
    Posix,
    /// `\` and `/`, drive letters, UNC shares, `\\?\` verbatim prefixes.
    Windows,
}

/// The path rules of one host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    /// Its separators and prefixes.
    pub style: Style,
    /// Whether names differing only in case name the same file.
    pub case_insensitive: bool,
}

impl Host {
    /// Linux: `/`, case-sensitive.
    pub const LINUX: Host = Host {
        style: Style::Posix,
        case_insensitive: false,
    };
    /// macOS: `/`, case-insensitive (APFS and HFS+ as formatted by default).
    pub const MACOS: Host = Host {
        style: Style::Posix,
        case_insensitive: true,
    };
    /// Windows: drive letters and shares, case-insensitive.
    pub const WINDOWS: Host = Host {
        style: Style::Windows,
        case_insensitive: true,
    };

    /// The rules of the OS this build runs on.
    pub const fn this() -> Host {
        if cfg!(windows) {
            Host::WINDOWS
        } else if cfg!(target_os = "macos") {
            Host::MACOS
        } else {
            Host::LINUX
        }
    }
}

/// The rules of the file system holding `dir`: [`Host::this`], except that on
/// macOS the volume itself says whether it is case-sensitive
/// (`pathconf(_PC_CASE_SENSITIVE)`; APFS and HFS+ can be formatted either way).
pub fn host_of(dir: &std::path::Path) -> Host {
    #[cfg(target_os = "macos")]
    if let Some(sensitive) = crate::macos::case_sensitive(dir) {
        return Host {
            case_insensitive: !sensitive,
            ..Host::MACOS
        };
    }
    let _ = dir;
    Host::this()
}

/// Where an absolute path starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Root {
    /// `/`.
    Slash,
    /// `C:\` (upper-cased; `\\?\C:\` is the same root).
    Drive(char),
    /// `\\server\share\` (also `\\?\UNC\server\share\`).
    Unc {
        /// The server.
        server: String,
        /// The share.
        share: String,
    },
}

/// An absolute path, lexically normalised: `.` gone, `..` applied, separators
/// unified, Windows' trailing dots and spaces refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbsPath {
    /// Where it starts.
    pub root: Root,
    /// Its components below the root.
    pub parts: Vec<String>,
}

/// Why a string is not an absolute path this module can reason about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// Relative, or rooted on the current drive only (`\x`).
    NotAbsolute,
    /// `C:x`: relative to the current directory of drive C.
    DriveRelative,
    /// `\\.\…` and `\\?\` forms other than a drive or UNC share (devices,
    /// volume GUIDs, GLOBALROOT).
    DeviceNamespace,
    /// A NUL character.
    Nul,
    /// A component Windows would rewrite or treat as a device (trailing dot or
    /// space, `:` stream names, `CON`, `NUL`, …), or `.`/`..` in a verbatim
    /// path, which Windows does not normalise.
    Component(String),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAbsolute => f.write_str("it is not an absolute path"),
            Self::DriveRelative => f.write_str(
                "a drive letter without a separator (C:x) is relative to that drive's current folder",
            ),
            Self::DeviceNamespace => f.write_str("device and volume paths are not accepted"),
            Self::Nul => f.write_str("it contains a NUL character"),
            Self::Component(c) => write!(
                f,
                "its component {c:?} is not a plain file name on this system"
            ),
        }
    }
}

/// The device names Windows reserves in every folder, with any extension.
const RESERVED: [&str; 24] = [
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "COM1", "COM2", "COM3", "COM4", "COM5",
    "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8",
    "LPT9",
];

/// Why `name` is not a plain file name on Windows, if it is not: it ends in a
/// dot or space (which Windows strips, so `a.` names `a`), holds a character
/// Windows forbids (`<>:"|?*`, `:` being a stream separator), or is a reserved
/// device name (`NUL`, `con.txt`).
pub fn windows_name_problem(name: &str) -> Option<&'static str> {
    if name.ends_with('.') || name.ends_with(' ') {
        return Some("it ends with a dot or a space, which Windows drops");
    }
    if name
        .chars()
        .any(|c| matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') || (c as u32) < 32)
    {
        return Some("it holds a character Windows does not allow in names");
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem)) {
        return Some("it is a device name on Windows");
    }
    None
}

/// Parses an absolute path by `host`'s rules.
pub fn parse_absolute(host: Host, s: &str) -> Result<AbsPath, PathError> {
    if s.contains('\0') {
        return Err(PathError::Nul);
    }
    match host.style {
        Style::Posix => {
            let rest = s.strip_prefix('/').ok_or(PathError::NotAbsolute)?;
            Ok(AbsPath {
                root: Root::Slash,
                parts: normalise(rest.split('/'), false, false)?,
            })
        }
        Style::Windows => parse_windows(s),
    }
}

fn is_sep(c: char) -> bool {
    c == '\\' || c == '/'
}

fn drive(s: &str) -> Option<char> {
    let mut cs = s.chars();
    let d = cs.next().filter(char::is_ascii_alphabetic)?;
    (cs.next() == Some(':')).then(|| d.to_ascii_uppercase())
}

fn parse_windows(s: &str) -> Result<AbsPath, PathError> {
    // Verbatim: `\\?\C:\…` or `\\?\UNC\server\share\…`; only `\` separates and
    // nothing is normalised, so `.` and `..` are refused rather than applied.
    if let Some(v) = s.strip_prefix(r"\\?\") {
        if let Some(d) = drive(v) {
            let rest = &v[2..];
            let rest = rest.strip_prefix('\\').ok_or(PathError::DriveRelative)?;
            return Ok(AbsPath {
                root: Root::Drive(d),
                parts: normalise(rest.split('\\'), true, true)?,
            });
        }
        if v.get(..4).is_some_and(|p| p.eq_ignore_ascii_case(r"UNC\")) {
            let mut it = v[4..].split('\\');
            let (server, share) = unc_names(&mut it)?;
            return Ok(AbsPath {
                root: Root::Unc { server, share },
                parts: normalise(it, true, true)?,
            });
        }
        return Err(PathError::DeviceNamespace);
    }
    let mut chars = s.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(a), Some(b), third) if is_sep(a) && is_sep(b) => {
            // `\\.\` and `\\?\` spelt with `/` are device paths too.
            if matches!(third, Some('.' | '?')) && s[3..].starts_with(is_sep) {
                return Err(PathError::DeviceNamespace);
            }
            let mut it = s[2..].split(is_sep);
            let (server, share) = unc_names(&mut it)?;
            Ok(AbsPath {
                root: Root::Unc { server, share },
                parts: normalise(it, true, false)?,
            })
        }
        _ => {
            let d = drive(s).ok_or(PathError::NotAbsolute)?;
            let rest = &s[2..];
            if !rest.starts_with(is_sep) {
                return Err(PathError::DriveRelative);
            }
            Ok(AbsPath {
                root: Root::Drive(d),
                parts: normalise(rest.split(is_sep), true, false)?,
            })
        }
    }
}

fn unc_names<'a>(it: &mut impl Iterator<Item = &'a str>) -> Result<(String, String), PathError> {
    let server = it
        .next()
        .filter(|s| !s.is_empty() && *s != "." && *s != "..");
    let share = it
        .next()
        .filter(|s| !s.is_empty() && *s != "." && *s != "..");
    match (server, share) {
        (Some(server), Some(share)) => Ok((server.to_owned(), share.to_owned())),
        _ => Err(PathError::NotAbsolute),
    }
}

/// Applies `.` and `..` (a `..` at the root stays at the root, as every OS
/// does); `windows` also refuses names Windows would rewrite, and `verbatim`
/// refuses `.` and `..` themselves.
fn normalise<'a>(
    segs: impl Iterator<Item = &'a str>,
    windows: bool,
    verbatim: bool,
) -> Result<Vec<String>, PathError> {
    let mut parts: Vec<String> = Vec::new();
    for seg in segs {
        match seg {
            "" => {}
            "." | ".." if verbatim => return Err(PathError::Component(seg.to_owned())),
            "." => {}
            ".." => {
                parts.pop();
            }
            s => {
                if windows && windows_name_problem(s).is_some() {
                    return Err(PathError::Component(s.to_owned()));
                }
                parts.push(s.to_owned());
            }
        }
    }
    Ok(parts)
}

/// Whether two names of one folder are the same file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Same {
    Yes,
    No,
    /// Equal only under a folding the file system may or may not apply.
    Maybe,
}

fn same_name(host: Host, a: &str, b: &str) -> Same {
    if a == b {
        return Same::Yes;
    }
    if !host.case_insensitive {
        return Same::No;
    }
    // ASCII case is folded by every case-insensitive file system.
    if a.eq_ignore_ascii_case(b) {
        return Same::Yes;
    }
    // Beyond ASCII, file systems fold differently (NTFS's upcase table, APFS's
    // normalisation-insensitive folding): equal under the widest folding is
    // not proof either way.
    let wide = |s: &str| s.nfkc().flat_map(char::to_lowercase).collect::<String>();
    if wide(a) == wide(b) {
        Same::Maybe
    } else {
        Same::No
    }
}

/// Where a path lies relative to a root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Containment {
    /// Inside (or the root itself); the components below the root, spelt as
    /// the candidate spells them.
    Inside(Vec<String>),
    /// Outside.
    Outside,
    /// The same as the root or not, depending on case folding this code cannot
    /// prove the file system applies: refuse rather than guess.
    Ambiguous,
}

/// Whether `path` lies inside `root` on `host`'s file system. Both are already
/// normalised ([`parse_absolute`]); symbolic links are the caller's business.
pub fn containment(host: Host, root: &AbsPath, path: &AbsPath) -> Containment {
    let roots_same = match (&root.root, &path.root) {
        (Root::Slash, Root::Slash) => Same::Yes,
        (Root::Drive(a), Root::Drive(b)) => {
            if a == b {
                Same::Yes
            } else {
                Same::No
            }
        }
        // Server and share names are case-insensitive on every Windows host.
        (
            Root::Unc {
                server: s1,
                share: h1,
            },
            Root::Unc {
                server: s2,
                share: h2,
            },
        ) => {
            let unc = Host {
                case_insensitive: true,
                ..host
            };
            worst(same_name(unc, s1, s2), same_name(unc, h1, h2))
        }
        _ => Same::No,
    };
    let mut verdict = roots_same;
    if verdict != Same::No {
        if path.parts.len() < root.parts.len() {
            return Containment::Outside;
        }
        for (r, p) in root.parts.iter().zip(&path.parts) {
            verdict = worst(verdict, same_name(host, r, p));
            if verdict == Same::No {
                break;
            }
        }
    }
    match verdict {
        Same::Yes => Containment::Inside(path.parts[root.parts.len()..].to_vec()),
        Same::No => Containment::Outside,
        Same::Maybe => Containment::Ambiguous,
    }
}

fn worst(a: Same, b: Same) -> Same {
    match (a, b) {
        (Same::No, _) | (_, Same::No) => Same::No,
        (Same::Maybe, _) | (_, Same::Maybe) => Same::Maybe,
        _ => Same::Yes,
    }
}

/// [`containment`] of two strings, each parsed by `host`'s rules.
pub fn contains_str(host: Host, root: &str, path: &str) -> Result<Containment, PathError> {
    Ok(containment(
        host,
        &parse_absolute(host, root)?,
        &parse_absolute(host, path)?,
    ))
}

#[cfg(test)]
mod tests;
