//! What the file-plane edits of one typed text resource share (the audio bus layout and
//! VisualShader graphs): the arguments every edit takes first (`path`, `expected_sha256`),
//! the read that checks the resource's class and models it, the compare-and-swap check
//! of the caller's expectation against the bytes read, and the sub-resource ids an edit
//! adds.

use godot_mcp_formats::Resource;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::ToolMeta;

/// An edit's metadata: destructive by the classification rule (a resource file write no
/// undo stack covers), with the file effect.
pub(crate) const fn edit_meta(
    toolset: Toolset,
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::Destructive> {
    ToolMeta {
        effect: Some(EffectKind::File),
        ..ToolMeta::read_only(toolset, name, title, description).of_class(class::Destructive)
    }
}

/// Whether `key` can name a stored property: letters, digits, `_` and `/` (a
/// sub-property path such as `process_material/spread`), not starting with `/`.
pub(crate) fn is_property_name(key: &str) -> bool {
    !key.is_empty()
        && !key.starts_with('/')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
}

/// The file an edit works on (`P`: a path, or an optional one where the family has a
/// default file) and the caller's compare-and-swap expectation.
pub(crate) struct FileEdit<P> {
    pub path: P,
    pub expected_sha256: Option<String>,
}

/// Declares the argument structs of a family of file edits. Each begins with `path`
/// (its description, attributes and type given once for the family, in brackets) and
/// `expected_sha256`, then has its own fields; `file()` answers the first two as a
/// [`FileEdit`].
macro_rules! edit_args {
    (path: $path:tt; $(#[$sm:meta])* pub struct $name:ident $fields:tt $($rest:tt)*) => {
        $crate::tools::kit::tres_edit::edit_args!(@one $path $(#[$sm])* $name $fields);
        $crate::tools::kit::tres_edit::edit_args!(path: $path; $($rest)*);
    };
    (path: $path:tt;) => {};
    (
        @one [$(#[$pm:meta])* $pty:ty]
        $(#[$sm:meta])* $name:ident { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }
    ) => {
        $(#[$sm])*
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct $name {
            $(#[$pm])*
            path: $pty,
            /// The file's sha256 now; else STALE.
            #[serde(default)]
            expected_sha256: Option<String>,
            $($(#[$fm])* $field: $ty,)*
        }

        impl $name {
            fn file(&self) -> $crate::tools::kit::tres_edit::FileEdit<$pty> {
                $crate::tools::kit::tres_edit::FileEdit {
                    path: self.path.clone(),
                    expected_sha256: self.expected_sha256.clone(),
                }
            }
        }
    };
}
pub(crate) use edit_args;

/// Refuses a path that is not a `.tres` (the text form of a `class` resource).
pub(crate) fn require_tres(path: &ResPath, class: &str) -> Result<(), ToolError> {
    if path.extension().as_deref() == Some("tres") {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            "path",
            format!("{path} is not a .tres path (a text {class})"),
        ))
    }
}

/// Refuses a resource (parsed from `path`) that is not a `class`.
pub(crate) fn require_class(path: &ResPath, res: &Resource, class: &str) -> Result<(), ToolError> {
    if res.resource_type == class {
        return Ok(());
    }
    let article = if class.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    Err(ToolError::invalid_params(
        "path",
        format!(
            "{path} is a {} resource, not {article} {class}",
            res.resource_type
        ),
    ))
}

/// Read the text resource at `path` (`real` on disk), check that it is a `class`, and
/// model it with `model`; answers the model and the sha256 of the bytes read. A file
/// the model cannot hold is refused rather than rewritten without what it dropped.
pub(crate) fn read_model<T>(
    state: &AppState,
    path: &ResPath,
    real: &std::path::Path,
    class: &str,
    model: impl FnOnce(&Resource) -> Result<T, String>,
) -> Result<(T, String), ToolError> {
    let text = crate::tools::kit::common::read_text(state, "path", path, real)?;
    let res = godot_mcp_formats::parse_resource(&text)
        .map_err(|e| crate::tools::kit::scene_doc::parse_error(path, &e))?;
    require_class(path, &res, class)?;
    let modelled = model(&res).map_err(|why| {
        ToolError::new(
            ErrorCode::ParseError,
            format!("{path}: {why}; this server does not rewrite it"),
        )
        .param("path")
    })?;
    Ok((
        modelled,
        crate::planes::project::sha256_hex(text.as_bytes()),
    ))
}

/// The bytes an edit was computed from (`read_sha`; `None`: no file) are its
/// expectation: a caller's `expected_sha256` must name them, else STALE with `hint`.
pub(crate) fn check_expected(
    path: &ResPath,
    expected: Option<&str>,
    read_sha: Option<&str>,
    hint: &str,
) -> Result<(), ToolError> {
    match expected {
        Some(e) if !read_sha.is_some_and(|r| r.eq_ignore_ascii_case(e)) => Err(ToolError::new(
            ErrorCode::Stale,
            format!("{path} is not the content expected_sha256 names; nothing was written"),
        )
        .param("expected_sha256")
        .hint(hint)
        .details(json!({"expected_sha256": e, "actual_sha256": read_sha}))),
        _ => Ok(()),
    }
}

/// A sub-resource id as Godot makes one (`Class_` and five of `[a-z0-9]`), derived from
/// what is being added (`seed`), so a dry run and the real run write the same bytes;
/// `taken` says which ids the file already has.
pub(crate) fn sub_id(class: &str, seed: &str, taken: impl Fn(&str) -> bool) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut n = 0u32;
    loop {
        let digest = Sha256::digest(format!("{seed}/{n}").as_bytes());
        let suffix: String = digest[..5]
            .iter()
            .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
            .collect();
        let id = format!("{class}_{suffix}");
        if !taken(&id) {
            return id;
        }
        n += 1;
    }
}
