//! Protocol constants and the Godot engine version as both sides of the bridge see it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Version of the bridge protocol; both sides exchange it in the hello and refuse to talk
/// when it differs (reported as the add-on version precondition, not a crash).
pub const BRIDGE_PROTOCOL_VERSION: u32 = 1;

/// How long the server waits for a reply when a request names no timeout of its own.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 10_000;

/// The oldest Godot the add-on supports; the `.gdextension` manifest says the same with
/// `compatibility_minimum = 4.4`, so an older editor refuses to load the library at all.
pub const MIN_GODOT_VERSION: GodotVersion = GodotVersion {
    major: 4,
    minor: 4,
    patch: 0,
    status: String::new(),
    build: String::new(),
};

/// A Godot engine version, as `Engine.get_version_info()` reports it in the editor and as
/// `godot --version` prints it (`4.4.1.stable.custom_build`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GodotVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// Release status: `stable`, `rc2`, `beta1`, `dev`…; empty when unknown.
    #[serde(default)]
    pub status: String,
    /// Build name: `official`, `custom_build`, a distributor's name…; empty when unknown.
    #[serde(default)]
    pub build: String,
}

impl GodotVersion {
    /// Whether this engine is at least `min`, comparing major, minor and patch only: a
    /// custom or release-candidate build of a supported version is supported too.
    pub fn is_at_least(&self, min: &GodotVersion) -> bool {
        (self.major, self.minor, self.patch) >= (min.major, min.minor, min.patch)
    }

    /// Whether the add-on supports this engine ([`MIN_GODOT_VERSION`] or newer, Godot 4 only).
    pub fn is_supported(&self) -> bool {
        self.major == MIN_GODOT_VERSION.major && self.is_at_least(&MIN_GODOT_VERSION)
    }
}

/// Prints the way Godot does: `4.4.1.stable.custom_build`, without empty parts.
impl fmt::Display for GodotVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for part in [&self.status, &self.build] {
            if !part.is_empty() {
                write!(f, ".{part}")?;
            }
        }
        Ok(())
    }
}

/// Why a version string is not a Godot version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseGodotVersionError {
    input: String,
}

impl fmt::Display for ParseGodotVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a Godot version (expected e.g. `4.4.1.stable.official`): {:?}",
            self.input
        )
    }
}

impl std::error::Error for ParseGodotVersionError {}

/// Parses what `godot --version` prints. Godot omits a zero patch (`4.4.stable.official`),
/// and may append a commit hash (`4.4.1.stable.official.49a5bc7b6`), which is dropped.
impl FromStr for GodotVersion {
    type Err = ParseGodotVersionError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = || ParseGodotVersionError {
            input: input.to_owned(),
        };
        let mut parts = input.trim().split('.').peekable();
        let mut number = |required: bool| -> Result<Option<u32>, ParseGodotVersionError> {
            match parts.peek() {
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    let n = p.parse().map_err(|_| err())?;
                    parts.next();
                    Ok(Some(n))
                }
                _ if required => Err(err()),
                _ => Ok(None),
            }
        };
        let major = number(true)?.ok_or_else(err)?;
        let minor = number(true)?.ok_or_else(err)?;
        let patch = number(false)?.unwrap_or(0);
        let status = parts.next().unwrap_or_default().to_owned();
        let build = parts.next().unwrap_or_default().to_owned();
        Ok(GodotVersion {
            major,
            minor,
            patch,
            status,
            build,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> GodotVersion {
        s.parse().unwrap()
    }

    #[test]
    fn parses_what_godot_prints() {
        let cases = [
            (
                "4.4.1.stable.custom_build",
                (4, 4, 1, "stable", "custom_build"),
            ),
            ("4.4.stable.official", (4, 4, 0, "stable", "official")),
            ("4.5.rc2.official.abc123", (4, 5, 0, "rc2", "official")),
            ("4.3.0", (4, 3, 0, "", "")),
            (" 4.4.1.stable.official\n", (4, 4, 1, "stable", "official")),
        ];
        for (input, (major, minor, patch, status, build)) in cases {
            let parsed = v(input);
            assert_eq!(
                (parsed.major, parsed.minor, parsed.patch),
                (major, minor, patch),
                "{input:?}"
            );
            assert_eq!(parsed.status, status, "{input:?}");
            assert_eq!(parsed.build, build, "{input:?}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_version() {
        for input in ["", "stable", "4", "4.", "x.4.1", "4.x.1"] {
            assert!(input.parse::<GodotVersion>().is_err(), "{input:?}");
        }
    }

    #[test]
    fn displays_like_godot_and_round_trips() {
        for input in [
            "4.4.1.stable.custom_build",
            "4.4.0.stable.official",
            "4.3.0",
        ] {
            assert_eq!(v(input).to_string(), input);
            assert_eq!(v(&v(input).to_string()), v(input));
        }
    }

    #[test]
    fn supports_4_4_and_newer_godot_4_only() {
        let table = [
            ("4.4.0.stable.official", true),
            ("4.4.1.stable.custom_build", true),
            ("4.4.1.rc1.official", true),
            ("4.5.0.stable.official", true),
            ("4.3.0.stable.official", false),
            ("3.6.0.stable.official", false),
            ("5.0.0.dev", false),
        ];
        for (input, supported) in table {
            assert_eq!(v(input).is_supported(), supported, "{input}");
        }
    }
}
