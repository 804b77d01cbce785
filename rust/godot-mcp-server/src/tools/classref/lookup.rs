//! The class reference tools' arguments and results: one class (`get_class_reference`)
//! and a name search (`search_class_reference`).

use std::collections::BTreeMap;

use godot_mcp_formats::classdoc::ClassDoc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ClassDb, class_db};
use crate::error::{ErrorCode, ToolError};
use crate::tools::{Call, Out};

/// The member kinds (get_class's `kinds`) and the search kinds (search_class_reference's
/// `kind`: a class, or a member kind) from one list, with the names agents use.
macro_rules! kinds {
    ($($kind:ident = $name:literal),* $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum MemberKind {
            $($kind,)*
        }

        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum SearchKind {
            Class,
            $($kind,)*
        }

        impl SearchKind {
            /// The kind as agents name it (its wire name).
            fn name(self) -> &'static str {
                match self {
                    Self::Class => "class",
                    $(Self::$kind => $name,)*
                }
            }
        }
    };
}

kinds!(
    Method = "method",
    Property = "property",
    Signal = "signal",
    Constant = "constant",
);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetClassArgs {
    /// Class name, e.g. Node2D.
    class: String,
    /// Only members whose name contains this (case-insensitive).
    #[serde(default)]
    member: Option<String>,
    /// Only these kinds of member.
    #[serde(default)]
    kinds: Option<Vec<MemberKind>>,
    /// Member descriptions too (default: only with `member`).
    #[serde(default)]
    descriptions: Option<bool>,
}

/// A method or signal: its signature, with its description when asked for.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Signature {
    Plain(String),
    Described {
        signature: String,
        description: String,
    },
}

/// A property of a class.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PropertyOut {
    name: String,
    r#type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    default: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overrides: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

/// A theme item of a Control class.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ThemeItemOut {
    name: String,
    data_type: String,
    r#type: String,
    default: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

/// One class of the reference; a member kind not asked for is absent.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ClassOut {
    class: String,
    inherits: Vec<String>,
    engine_version: String,
    descriptions: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    descriptions_note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    brief: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    constructors: Option<Vec<Signature>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    methods: Option<Vec<Signature>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<Vec<PropertyOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    theme_items: Option<Vec<ThemeItemOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signals: Option<Vec<Signature>>,
    /// Plain constants by name (their values as written in the reference).
    #[serde(skip_serializing_if = "Option::is_none")]
    constants: Option<BTreeMap<String, String>>,
    /// Enum values grouped under their enum.
    #[serde(skip_serializing_if = "Option::is_none")]
    enums: Option<BTreeMap<String, BTreeMap<String, String>>>,
}

/// Render one class for an agent: signatures as one string each (the shortest exact
/// form), properties and constants as small objects.
pub(crate) fn class_out(
    db: &ClassDb,
    class: &ClassDoc,
    member: Option<&str>,
    kinds: &[MemberKind],
    member_descriptions: bool,
) -> ClassOut {
    let needle = member.map(str::to_lowercase);
    let keep = |name: &str| {
        needle
            .as_deref()
            .is_none_or(|n| name.to_lowercase().contains(n))
    };
    let want = |k: MemberKind| kinds.is_empty() || kinds.contains(&k);
    // Member descriptions only when asked for (they are most of a class's bytes).
    let desc = |d: &str| (member_descriptions && !d.is_empty()).then(|| d.to_string());
    let sig = |signature: String, d: &str| match desc(d) {
        None => Signature::Plain(signature),
        Some(description) => Signature::Described {
            signature,
            description,
        },
    };
    let mut out = ClassOut {
        class: class.name.clone(),
        inherits: db.chain(&class.name),
        engine_version: db.version.clone(),
        descriptions: !class.brief.is_empty() || !class.description.is_empty(),
        descriptions_note: db.descriptions_note.clone(),
        brief: (!class.brief.is_empty()).then(|| class.brief.clone()),
        description: (member.is_none() && kinds.is_empty() && !class.description.is_empty())
            .then(|| class.description.clone()),
        constructors: None,
        methods: None,
        properties: None,
        theme_items: None,
        signals: None,
        constants: None,
        enums: None,
    };
    if want(MemberKind::Method) {
        let method =
            |m: &godot_mcp_formats::classdoc::MethodDoc| sig(m.signature(), &m.description);
        let ctors: Vec<Signature> = class
            .constructors
            .iter()
            .filter(|m| keep(&m.name))
            .map(method)
            .collect();
        if !ctors.is_empty() {
            out.constructors = Some(ctors);
        }
        out.methods = Some(
            class
                .methods
                .iter()
                .filter(|m| keep(&m.name))
                .map(method)
                .collect(),
        );
    }
    if want(MemberKind::Property) {
        out.properties = Some(
            class
                .members
                .iter()
                .filter(|m| keep(&m.name))
                .map(|m| PropertyOut {
                    name: m.name.clone(),
                    r#type: m.ty.display().to_string(),
                    default: m.default.clone(),
                    overrides: m.overrides.clone(),
                    description: desc(&m.description),
                })
                .collect(),
        );
        let theme: Vec<ThemeItemOut> = class
            .theme_items
            .iter()
            .filter(|t| keep(&t.name))
            .map(|t| ThemeItemOut {
                name: t.name.clone(),
                data_type: t.data_type.clone(),
                r#type: t.ty.clone(),
                default: t.default.clone(),
                description: desc(&t.description),
            })
            .collect();
        if !theme.is_empty() {
            out.theme_items = Some(theme);
        }
    }
    if want(MemberKind::Signal) {
        out.signals = Some(
            class
                .signals
                .iter()
                .filter(|s| keep(&s.name))
                .map(|s| sig(s.signature(), &s.description))
                .collect(),
        );
    }
    if want(MemberKind::Constant) {
        // Enum values grouped under their enum; plain constants on their own.
        let mut enums: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut constants = BTreeMap::new();
        for c in class.constants.iter().filter(|c| keep(&c.name)) {
            match &c.enum_name {
                Some(e) => {
                    enums
                        .entry(e.clone())
                        .or_default()
                        .insert(c.name.clone(), c.value.clone());
                }
                None => {
                    constants.insert(c.name.clone(), c.value.clone());
                }
            }
        }
        out.constants = Some(constants);
        out.enums = Some(enums);
    }
    out
}

pub(super) async fn get_class_reference(
    Call { state, args, .. }: Call<GetClassArgs>,
) -> Out<ClassOut> {
    let db = class_db(&state).await?;
    let descriptions = args.descriptions.unwrap_or(args.member.is_some());
    lookup_class(
        &db,
        &args.class,
        args.member.as_deref(),
        args.kinds.as_deref().unwrap_or(&[]),
        descriptions,
    )
}

/// The class reference of one class, or RESOURCE_NOT_FOUND with near names.
pub fn lookup_class(
    db: &ClassDb,
    class: &str,
    member: Option<&str>,
    kinds: &[MemberKind],
    member_descriptions: bool,
) -> Result<ClassOut, ToolError> {
    match db.classes.get(class) {
        Some(c) => Ok(class_out(db, c, member, kinds, member_descriptions)),
        None => {
            let lower = class.to_lowercase();
            let near: Vec<&String> = db
                .classes
                .keys()
                .filter(|k| {
                    let k = k.to_lowercase();
                    k == lower || k.contains(&lower) || (lower.len() > 3 && lower.contains(&k))
                })
                .take(8)
                .collect();
            let mut e = ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("no class named {class:?} in Godot {}", db.version),
            )
            .param("class");
            if !near.is_empty() {
                e = e.hint(format!(
                    "Near names: {}.",
                    near.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            } else {
                e = e.hint("Use search_class_reference to find the name.");
            }
            Err(e)
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// Name or part of one, e.g. `velocity`.
    #[schemars(length(min = 1, max = 200))]
    query: String,
    /// Only this kind.
    #[serde(default)]
    kind: Option<SearchKind>,
    /// next_cursor of the previous page.
    #[serde(default)]
    cursor: Option<String>,
    /// Page size (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Hit {
    class: String,
    kind: &'static str,
    name: String,
    /// The signature or type, so a hit is usable without a second call.
    #[serde(skip_serializing_if = "String::is_empty")]
    detail: String,
    #[serde(skip)]
    rank: u8,
}

pub(super) async fn search_class_reference(
    Call { state, args, .. }: Call<SearchArgs>,
) -> Out<SearchOut> {
    let db = class_db(&state).await?;
    search_classes(
        &db,
        &args.query,
        args.kind,
        args.cursor.as_deref(),
        args.limit,
    )
}

/// A page of class-reference matches.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    query: String,
    engine_version: String,
    total: usize,
    returned: usize,
    results: Vec<Hit>,
    next_cursor: Option<String>,
}

/// Search `db`: exact name matches first, then prefixes, then substrings; within a
/// rank by class then name, so pages are stable.
pub fn search_classes(
    db: &ClassDb,
    query: &str,
    kind: Option<SearchKind>,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<SearchOut, ToolError> {
    let q = query.trim().to_lowercase();
    if q.is_empty() || q.len() > 200 {
        return Err(ToolError::invalid_params(
            "query",
            "query must be 1–200 characters",
        ));
    }
    let limit = limit.unwrap_or(50) as usize;
    if !(1..=200).contains(&limit) {
        return Err(ToolError::invalid_params("limit", "limit must be 1–200"));
    }
    let start: usize = match cursor {
        None => 0,
        Some(c) => c
            .parse()
            .map_err(|_| ToolError::invalid_params("cursor", "cursor must be a next_cursor"))?,
    };
    let rank = |name: &str| -> Option<u8> {
        let n = name.to_lowercase();
        if n == q {
            Some(0)
        } else if n.starts_with(&q) {
            Some(1)
        } else if n.contains(&q) {
            Some(2)
        } else {
            None
        }
    };
    let want = |k: SearchKind| kind.is_none_or(|w| w == k);
    let mut hits: Vec<Hit> = Vec::new();
    // The detail (a signature) is built only for a match: most names do not match.
    let mut push = |class: &str, k: SearchKind, name: &str, detail: &dyn Fn() -> String| {
        if want(k)
            && let Some(rank) = rank(name)
        {
            hits.push(Hit {
                class: class.into(),
                kind: k.name(),
                name: name.into(),
                detail: detail(),
                rank,
            });
        }
    };
    for (name, c) in &db.classes {
        push(name, SearchKind::Class, name, &|| {
            c.inherits
                .clone()
                .map(|i| format!("extends {i}"))
                .unwrap_or_default()
        });
        for m in &c.methods {
            push(name, SearchKind::Method, &m.name, &|| m.signature());
        }
        for m in &c.members {
            push(name, SearchKind::Property, &m.name, &|| {
                m.ty.display().to_string()
            });
        }
        for s in &c.signals {
            push(name, SearchKind::Signal, &s.name, &|| s.signature());
        }
        for k in &c.constants {
            let detail = || match &k.enum_name {
                Some(e) => format!("{e} = {}", k.value),
                None => k.value.clone(),
            };
            push(name, SearchKind::Constant, &k.name, &detail);
        }
    }
    hits.sort_by(|a, b| (a.rank, &a.class, &a.name).cmp(&(b.rank, &b.class, &b.name)));
    let total = hits.len();
    let page: Vec<Hit> = hits.into_iter().skip(start).take(limit).collect();
    let end = start + page.len();
    Ok(SearchOut {
        query: query.to_string(),
        engine_version: db.version.clone(),
        total,
        returned: page.len(),
        results: page,
        next_cursor: (end < total).then(|| end.to_string()),
    })
}
