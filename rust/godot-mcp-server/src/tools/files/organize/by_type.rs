//! list_resources_by_type: the project's resources of one Godot type, paged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::tools::kit::common::page_limit;
use crate::tools::kit::common::{read_small, walk_files};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

/// list_resources_by_type, as published.
pub(super) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta::read_only(
            Toolset::Files,
            "list_resources_by_type",
            "List resources by type",
            "Find .tres/.tscn/.res files whose type, script class or scene root type \
                 matches; paginated.",
        ),
        list_resources_by_type,
    )]
}

// list_resources_by_type

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ByTypeArgs {
    /// Class or script class, e.g. StandardMaterial3D, PackedScene, PlayerStats.
    #[serde(rename = "type")]
    type_name: String,
    /// Only under this folder.
    #[serde(default)]
    under: Option<ResPath>,
    #[serde(default)]
    offset: Option<u32>,
    /// Default 100.
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(super) struct TypedFile {
    pub(super) path: String,
    #[serde(rename = "type")]
    pub(super) type_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) script_class: Option<String>,
    /// A scene's root node type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) root_type: Option<String>,
}

/// `name="value"` in a section header line.
pub(super) fn attr(line: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = line.find(&key)? + key.len();
    let len = line[at..].find('"')?;
    Some(line[at..at + len].to_string())
}

/// The type of a text resource or scene, from its headers.
pub(super) fn text_type(text: &str) -> Option<TypedFile> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if first.starts_with("[gd_resource") {
        return Some(TypedFile {
            path: String::new(),
            type_name: attr(first, "type")?,
            script_class: attr(first, "script_class"),
            root_type: None,
        });
    }
    if first.starts_with("[gd_scene") {
        let root = text.lines().find(|l| l.starts_with("[node "));
        return Some(TypedFile {
            path: String::new(),
            type_name: "PackedScene".into(),
            script_class: None,
            root_type: root.and_then(|l| attr(l, "type")),
        });
    }
    None
}

/// The type of a binary resource: `RSRC`, four u32 fields (endianness, real size,
/// version major, minor, format), then the class as a length-prefixed string.
pub(super) fn binary_type(bytes: &[u8]) -> Option<String> {
    if bytes.get(0..4)? != b"RSRC" {
        return None;
    }
    let big = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) != 0;
    let word = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let len = word(24)? as usize;
    if len == 0 || len > 256 {
        return None;
    }
    let raw = bytes.get(28..28 + len)?;
    let s = std::str::from_utf8(raw).ok()?.trim_end_matches('\0');
    (!s.is_empty()).then(|| s.to_string())
}

/// list_resources_by_type's page.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ByTypePage {
    #[serde(rename = "type")]
    type_name: String,
    total: usize,
    offset: usize,
    returned: usize,
    next_offset: Option<usize>,
    items: Vec<TypedFile>,
}

pub(super) async fn list_resources_by_type(
    Call { state, args, .. }: Call<ByTypeArgs>,
) -> Out<ByTypePage> {
    let limit = page_limit(&state, args.limit, 100)?;
    tokio::task::spawn_blocking(move || {
        let base = args.under.clone().unwrap_or_else(ResPath::root);
        if base.is_hidden() {
            return Err(ToolError::new(
                ErrorCode::PathRefused,
                format!("{base} is refused: hidden folders (like .godot/) are Godot's cache"),
            )
            .param("under"));
        }
        let real = state.project.resolve("under", &base)?;
        if !real.is_dir() {
            return Err(ToolError::not_found(format!("{base} is not a folder")).param("under"));
        }
        let mut found = Vec::new();
        let mut visited = 0;
        walk_files(&state, &real, &base, &mut found, &mut visited)?;
        found.sort();
        let mut matches = Vec::new();
        for (path, real, size) in found {
            let typed = match path.rsplit('.').next() {
                Some("tres" | "tscn") => read_small(&state, &real, size)
                    .ok()
                    .and_then(|t| text_type(&t)),
                Some("res") => {
                    let mut head = vec![0u8; 512];
                    std::fs::File::open(&real)
                        .and_then(|mut f| {
                            use std::io::Read;
                            let n = f.read(&mut head)?;
                            head.truncate(n);
                            Ok(())
                        })
                        .ok()
                        .and_then(|()| binary_type(&head))
                        .map(|t| TypedFile {
                            path: String::new(),
                            type_name: t,
                            script_class: None,
                            root_type: None,
                        })
                }
                _ => None,
            };
            let Some(mut t) = typed else { continue };
            let wanted = &args.type_name;
            if t.type_name == *wanted
                || t.script_class.as_ref() == Some(wanted)
                || t.root_type.as_ref() == Some(wanted)
            {
                t.path = path;
                matches.push(t);
            }
        }
        let offset = args.offset.unwrap_or(0) as usize;
        let total = matches.len();
        let page: Vec<TypedFile> = matches.into_iter().skip(offset).take(limit).collect();
        let next = offset + page.len();
        Ok(ByTypePage {
            type_name: args.type_name,
            total,
            offset,
            returned: page.len(),
            next_offset: (next < total).then_some(next),
            items: page,
        })
    })
    .await
    .map_err(|e| ToolError::internal(format!("listing task failed: {e}")))?
}
