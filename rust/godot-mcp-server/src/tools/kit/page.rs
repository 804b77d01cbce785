//! Paging of list answers (the analysis tools', cross-scene edits'): a typed `Page`, or
//! the paging fields of an untyped list; and the blocking pool the disk walks run on.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::state::AppState;
use crate::tools::Also;
use crate::tools::kit::common::page_limit;

/// Page size when the caller gives none.
const DEFAULT_LIMIT: u32 = 100;

/// One page of a list: the paging fields and the page's items.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Page<T> {
    pub total: usize,
    pub offset: usize,
    pub returned: usize,
    pub next_offset: Option<usize>,
    pub items: Vec<T>,
}

/// A page with the fields a tool adds beside it.
pub(crate) type PageWith<T, X> = Also<Page<T>, X>;

/// `items[offset..offset+limit]` as a typed `Page`.
pub(crate) fn page<T>(
    state: &AppState,
    offset: Option<u32>,
    limit: Option<u32>,
    items: Vec<T>,
) -> Result<Page<T>, ToolError> {
    let limit = page_limit(state, limit, DEFAULT_LIMIT)?;
    let offset = offset.unwrap_or(0) as usize;
    let total = items.len();
    let page: Vec<T> = items.into_iter().skip(offset).take(limit).collect();
    let next = offset + page.len();
    Ok(Page {
        total,
        offset,
        returned: page.len(),
        next_offset: (next < total).then_some(next),
        items: page,
    })
}

/// `items[offset..offset+limit]` with the paging fields of the answer.
pub(crate) fn paged<T: Serialize>(
    state: &AppState,
    offset: Option<u32>,
    limit: Option<u32>,
    items: &[T],
) -> Result<Value, ToolError> {
    let limit = page_limit(state, limit, DEFAULT_LIMIT)?;
    let offset = offset.unwrap_or(0) as usize;
    let page: Vec<&T> = items.iter().skip(offset).take(limit).collect();
    let next = offset + page.len();
    Ok(json!({
        "total": items.len(),
        "offset": offset,
        "returned": page.len(),
        "next_offset": (next < items.len()).then_some(next),
        "items": page,
    }))
}

/// A page with `more` beside it.
pub(crate) fn with<T, X>(page: Page<T>, more: X) -> PageWith<T, X> {
    Also { base: page, more }
}

/// Run `f` on the blocking pool (disk walks and parses).
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::internal(format!("analysis task failed: {e}")))?
}
