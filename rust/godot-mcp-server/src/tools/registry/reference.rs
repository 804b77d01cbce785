//! The generated references: docs/tools.md and the tool table of docs/safety-model.md.

use serde_json::Value;

use super::{Handler, Registry, ToolDef};
use crate::rules::Toolset;

/// Markers around the generated table in docs/safety-model.md.
pub(super) const DOCS_TABLE_BEGIN: &str =
    "<!-- BEGIN GENERATED TOOL TABLE (cargo test; INSTA_UPDATE=always to regenerate) -->";
pub(super) const DOCS_TABLE_END: &str = "<!-- END GENERATED TOOL TABLE -->";

impl Registry {
    /// The table of every tool and its class, toolset and gates, as Markdown.
    pub(crate) fn safety_table_markdown(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "—" };
        let mut out = String::from(
            "| tool | class | toolset | on by default | effect | dry_run | confirm | approval gate |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for def in self.iter() {
            let m = &def.meta;
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
                m.name,
                m.class.as_str(),
                m.toolset.as_str(),
                yes(Toolset::DEFAULT.contains(&m.toolset)),
                crate::rules::effect_str(m.effect),
                yes(m.class.takes_dry_run()),
                if m.class.requires_confirm() {
                    "required"
                } else {
                    "—"
                },
                if matches!(def.handler, Handler::Batch) {
                    "as its most dangerous entry".to_string()
                } else {
                    yes(crate::rules::is_gated(m.class, def.runtime)).to_string()
                },
            ));
        }
        out
    }
}

/// The tool reference (docs/tools.md), generated from the registry so it cannot drift.
pub(super) fn reference_markdown(registry: &Registry) -> String {
    let tools: Vec<&ToolDef> = registry.iter().collect();
    let mut out = String::from(
        "# Tools\n\n<!-- Generated from the tool registry by \
         `INSTA_UPDATE=always cargo test -p godot-mcp-server --lib docs_`; do not edit by hand. -->\n\n\
         Every tool carries `_meta.safety_class` in `tools/list`. `mutating` tools take \
         `dry_run`; `destructive` tools take `dry_run` and need `confirm=true`.\n\n\
         ## Toolsets\n\n\
         `tools/list` holds the tools of the enabled toolsets, in this order. With no \
         `--toolsets` / `GODOT_MCP_TOOLSETS`, the default ones are enabled and an agent \
         enables the others with `manage_toolsets` (`list_toolsets` describes them); a \
         named list is the ceiling and what is enabled at start (`all`: every tool, for \
         clients that search tools themselves).\n\n\
         | toolset | default | purpose | tools |\n|---|---|---|---|\n",
    );
    for t in Toolset::ALL {
        let names: Vec<String> = tools
            .iter()
            .filter(|d| d.meta.toolset == t)
            .map(|d| format!("`{}`", d.meta.name))
            .collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            t.as_str(),
            if Toolset::DEFAULT.contains(&t) {
                "on"
            } else {
                "off"
            },
            t.purpose(),
            names.join(", ")
        ));
    }
    out.push_str("\n## Every tool\n\n| tool | class | toolset | effect |\n|---|---|---|---|\n");
    for t in &tools {
        out.push_str(&format!(
            "| [`{0}`](#{0}) | {1} | {2} | {3} |\n",
            t.meta.name,
            t.meta.class.as_str(),
            t.meta.toolset.as_str(),
            crate::rules::effect_str(t.meta.effect)
        ));
    }
    for t in &tools {
        out.push_str(&format!(
            "\n### {}\n\n{} — class `{}`, toolset `{}`, effect `{}`.\n\n{}\n",
            t.meta.name,
            t.meta.title,
            t.meta.class.as_str(),
            t.meta.toolset.as_str(),
            crate::rules::effect_str(t.meta.effect),
            t.meta
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ));
        // Generated now, not read from the published list: one regeneration run
        // brings this page and the list up to date together.
        let input_schema = (t.schemas)(&t.meta).0;
        let props = input_schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            Some(props) if !props.is_empty() => {
                out.push_str("\n| argument | type | required | description |\n|---|---|---|---|\n");
                for (name, schema) in props {
                    let ty = match schema.get("type") {
                        Some(Value::String(s)) => s.clone(),
                        // `["string", "null"]`: string or null.
                        Some(Value::Array(ts)) => ts
                            .iter()
                            .map(|t| t.as_str().unwrap_or("?"))
                            .collect::<Vec<_>>()
                            .join(" or "),
                        Some(other) => other.to_string(),
                        None => "any".into(),
                    };
                    let ty = match schema.get("enum").and_then(Value::as_array) {
                        Some(values) => values
                            .iter()
                            .map(|v| {
                                format!(
                                    "`{}`",
                                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(" \\| "),
                        None => ty,
                    };
                    let desc = schema
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .replace('\n', " ");
                    out.push_str(&format!(
                        "| `{name}` | {ty} | {} | {desc} |\n",
                        if required.contains(&name.as_str()) {
                            "yes"
                        } else {
                            "no"
                        }
                    ));
                }
            }
            _ => out.push_str("\nNo arguments.\n"),
        }
    }
    out
}
