//! Identifiers and small value types shared by every part of the journal.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Serde through the type's text form (`Display` / `FromStr`), the form the
/// journal stores and the CLI prints.
macro_rules! serde_as_text {
    ($ty:ty) => {
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// `as_str`, `parse` and `Display` of a journal enum from one table of its
/// spellings, so the written and the parsed form cannot drift apart.
macro_rules! spelled {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// The journal's spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }

            pub(crate) fn parse(s: &str) -> Option<Self> {
                match s {
                    $($text => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// Fills `buf` with OS randomness. Identity depends on it, so a failing RNG is an
/// error, never a fallback to something predictable.
pub(crate) fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(buf)
}

/// A transaction id: 128 random bits, written as a UUID (version 4 layout), e.g.
/// `00000000-0000-0000-0000-000000000301`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnId([u8; 16]);

impl TxnId {
    /// A fresh random id.
    pub fn random() -> std::io::Result<Self> {
        let mut b: [u8; 16] = random_bytes()?;
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        Ok(Self(b))
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// Builds an id from raw bytes (tests, benches and importers).
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }
}

impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = hex::encode(self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

impl fmt::Debug for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TxnId({self})")
    }
}

/// Text that is not the written form of a transaction id or a content hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not {expected}: {text:?}")]
pub struct ParseIdError {
    /// What the text should have been, e.g. `a transaction id (expected 8-4-4-4-12 hex digits)`.
    pub expected: &'static str,
    /// The text.
    pub text: String,
}

impl FromStr for TxnId {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseIdError {
            expected: "a transaction id (expected 8-4-4-4-12 hex digits)",
            text: s.to_owned(),
        };
        let groups: Vec<&str> = s.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        if groups.len() != 5 || groups.iter().zip(lens).any(|(g, l)| g.len() != l) {
            return Err(err());
        }
        let joined: String = groups.concat();
        let mut out = [0u8; 16];
        hex::decode_to_slice(&joined, &mut out).map_err(|_| err())?;
        Ok(Self(out))
    }
}

serde_as_text!(TxnId);

/// A SHA-256 content hash, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub [u8; 32]);

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let digest = Sha256::digest(bytes);
        let mut out = [0u8; 32];
        out.copy_from_slice(&digest);
        Self(out)
    }

    /// The first 12 hex digits, for summaries.
    pub fn short(&self) -> String {
        hex::encode(&self.0[..6])
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.short())
    }
}

impl FromStr for ContentHash {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out).map_err(|_| ParseIdError {
            expected: "a sha256 hex digest (expected 64 hex digits)",
            text: s.to_owned(),
        })?;
        Ok(Self(out))
    }
}

serde_as_text!(ContentHash);

/// The state of one file path: absent, or present with these bytes' hash.
///
/// Serialized as `{"state":"absent"}` or `{"state":"present","sha256":"…"}`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileState {
    /// No file at the path.
    Absent,
    /// A regular file whose bytes hash to `sha256`.
    Present {
        /// The content hash.
        sha256: ContentHash,
    },
}

impl FileState {
    /// The state of a file holding `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self::Present {
            sha256: ContentHash::of(bytes),
        }
    }
}

impl fmt::Display for FileState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absent => f.write_str("absent"),
            Self::Present { sha256 } => write!(f, "sha256:{}", sha256.short()),
        }
    }
}

/// The state of a transaction. `Open` is the only non-terminal state; there is
/// no fourth terminal state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnStatus {
    /// The intent is durable; the outcome is not yet recorded.
    Open,
    /// The effect was undone (or never landed) from a proven pre-state.
    Compensated,
    /// The effect is proven to have landed in its post-state.
    Committed,
    /// Neither could be proven; the write gate is closed until repair.
    Quarantined,
}

spelled!(TxnStatus {
    Open => "open",
    Compensated => "compensated",
    Committed => "committed",
    Quarantined => "quarantined",
});

/// Which kind of effect a transaction made; the proof form follows from it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectKind {
    /// An on-disk mutation, proven by pre/post content hashes or a tombstone.
    File,
    /// A supervised process, proven by its launch receipt and terminal result.
    ProcessLaunch,
    /// An effect applied through the editor bridge.
    EditorRuntime,
}

spelled!(EffectKind {
    File => "file",
    ProcessLaunch => "process_launch",
    EditorRuntime => "editor_runtime",
});

/// Who asks, in which context, for idempotent replay. The project object id
/// and generation, the tool family and the operation complete the identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// The client's idempotency identifier.
    pub id: String,
    /// The mode-specific principal.
    pub principal: String,
    /// The session within the principal.
    pub session: String,
    /// The full canonical request hash (see [`crate::journal::canonical_request_hash`]).
    pub request_hash: ContentHash,
}

/// Milliseconds since the Unix epoch, the journal's timestamps.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txn_id_round_trips_through_its_text_form() {
        let id = TxnId::random().unwrap();
        let text = id.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(text.parse::<TxnId>().unwrap(), id);
        let spec: TxnId = "00000000-0000-0000-0000-000000000301".parse().unwrap();
        assert_eq!(spec.to_string(), "00000000-0000-0000-0000-000000000301");
    }

    #[test]
    fn malformed_ids_and_hashes_are_errors_not_panics() {
        for bad in [
            "",
            "0000",
            "00000000-0000-0000-0000-00000000030g",
            "ü-ü-ü-ü-ü",
        ] {
            assert!(bad.parse::<TxnId>().is_err(), "{bad:?}");
        }
        assert!("ab".parse::<ContentHash>().is_err());
    }

    #[test]
    fn file_state_serializes_tagged() {
        let s = serde_json::to_string(&FileState::of(b"x")).unwrap();
        assert!(s.starts_with(r#"{"state":"present","sha256":""#), "{s}");
        assert_eq!(
            serde_json::to_string(&FileState::Absent).unwrap(),
            r#"{"state":"absent"}"#
        );
    }
}
