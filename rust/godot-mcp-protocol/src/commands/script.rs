//! Script parameters: `script.attach`.

use serde::{Deserialize, Serialize};

/// `script.attach`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptAttach {
    pub node: String,
    pub script: String,
}
