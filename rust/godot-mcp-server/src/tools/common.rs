//! Small checks that many file-plane tools share, so that each is written once and
//! every tool words the same refusal the same way.

use crate::error::ToolError;
use crate::state::AppState;

/// A count parameter (`limit`, `max_keys`…): `value`, or `default` when absent,
/// when it lies in `1..=max`; otherwise `INVALID_PARAMS` naming the parameter.
pub(crate) fn count_param(
    param: &str,
    value: Option<u32>,
    default: u32,
    max: usize,
) -> Result<usize, ToolError> {
    let n = value.unwrap_or(default) as usize;
    if n == 0 || n > max {
        return Err(ToolError::invalid_params(
            param,
            format!("{param} must be between 1 and {max}"),
        ));
    }
    Ok(n)
}

/// The page size asked for (`limit`, or `default`), checked against the server's
/// page limit.
pub(crate) fn page_limit(
    state: &AppState,
    limit: Option<u32>,
    default: u32,
) -> Result<usize, ToolError> {
    count_param("limit", limit, default, state.limits.max_page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_outside_its_range_is_refused_with_the_parameter_named() {
        assert_eq!(count_param("limit", None, 100, 1000).unwrap(), 100);
        assert_eq!(count_param("limit", Some(1000), 100, 1000).unwrap(), 1000);
        for bad in [0, 1001] {
            let e = count_param("max_keys", Some(bad), 100, 1000).unwrap_err();
            assert_eq!(e.message, "max_keys must be between 1 and 1000");
            assert_eq!(e.param.as_deref(), Some("max_keys"));
        }
    }
}
