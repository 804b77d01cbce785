//! A planned tool's plan: its effect, its apply step and its dry-run preview, typed,
//! and erased into JSON objects for the policy.

use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::planes::project::JournalCall;

/// What a planned tool will do, decided before anything changes. `E` is the effect
/// (reported by both the dry run and the real run), `X` what applying adds (and what
/// a preview adds to a dry run). Both are typed: their schemas make the tool's
/// `outputSchema` (see `schema::planned_output_schema`).
pub(crate) struct Plan<E = Map<String, Value>, X = Map<String, Value>> {
    /// The effect, exactly as the real run reports it (persistence verdict included).
    pub effect: E,
    /// Make the effect happen. Runs only after every gate passed, with the journal
    /// identity of the call (its writes are recorded under it).
    pub apply: ApplyFn<X>,
    /// Completes `effect` for a dry run only, when computing it costs a round trip the
    /// real run does not need: an editor command's reply carries the same verdict its
    /// probe would, so a real run sends one request (one editor frame), not two.
    pub preview: Option<Box<dyn FnOnce() -> Result<X, ToolError> + Send>>,
}

impl<E, X> Plan<E, X> {
    /// A plan with no preview step.
    pub(crate) fn new(
        effect: E,
        apply: impl FnOnce(&mut JournalCall) -> Result<X, ToolError> + Send + 'static,
    ) -> Result<Self, ToolError> {
        Ok(Self {
            effect,
            apply: Box::new(apply),
            preview: None,
        })
    }
}

/// What a journaled write adds when applied: the transaction that made it.
#[derive(Debug, serde::Serialize, JsonSchema)]
pub(crate) struct Committed {
    pub transaction_id: String,
}

/// What a tool's typed result adds to nothing: a plan whose apply reports no fields.
#[derive(Debug, Default, serde::Serialize, JsonSchema)]
pub(crate) struct NoFields {}

/// A plan's apply: it runs with the call's journal identity and returns what it adds.
pub(crate) type ApplyFn<X> = Box<dyn FnOnce(&mut JournalCall) -> Result<X, ToolError> + Send>;

/// What an erased plan's apply adds to the result, as a JSON object.
pub(crate) type ErasedApply = ApplyFn<Map<String, Value>>;
/// What an erased plan's preview adds to a dry run's result, as a JSON object.
pub(crate) type ErasedStep = Box<dyn FnOnce() -> Result<Map<String, Value>, ToolError> + Send>;

/// A [`Plan`] with its types erased into JSON objects: what the policy runs.
pub(crate) struct ErasedPlan {
    pub effect: Map<String, Value>,
    pub apply: ErasedApply,
    pub preview: Option<ErasedStep>,
}

/// A serializable value as an untyped JSON object (a plan part not yet typed).
pub(crate) fn untyped<T: serde::Serialize>(v: T) -> Result<Map<String, Value>, ToolError> {
    object_of("a plan part", v)
}

/// Serialize a typed result part into a JSON object.
pub(super) fn object_of<T: serde::Serialize>(
    what: &str,
    v: T,
) -> Result<Map<String, Value>, ToolError> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ToolError::internal(format!("{what} must be a JSON object"))),
        Err(e) => Err(ToolError::internal(e.to_string())),
    }
}

/// Two typed result parts as one object (`base`'s fields, then `more`'s).
#[derive(Debug, serde::Serialize, JsonSchema)]
pub(crate) struct Also<A, B> {
    #[serde(flatten)]
    pub base: A,
    #[serde(flatten)]
    pub more: B,
}

impl<E, X: 'static> Plan<E, X> {
    /// The same plan with its effect extended (or replaced) by `f`.
    pub(crate) fn map_effect<M>(self, f: impl FnOnce(E) -> M) -> Plan<M, X> {
        Plan {
            effect: f(self.effect),
            apply: self.apply,
            preview: self.preview,
        }
    }

    /// The same plan with what applying (and a preview) adds mapped by `f`.
    pub(crate) fn map_applied<Y>(self, f: impl Fn(X) -> Y + Send + Sync + 'static) -> Plan<E, Y> {
        let f = Arc::new(f);
        let g = f.clone();
        let apply = self.apply;
        Plan {
            effect: self.effect,
            apply: Box::new(move |call| apply(call).map(|x| f(x))),
            preview: self
                .preview
                .map(|p| Box::new(move || p().map(|x| g(x))) as Box<_>),
        }
    }
}

impl<E: serde::Serialize, X: serde::Serialize + 'static> Plan<E, X> {
    pub(super) fn erase(self) -> Result<ErasedPlan, ToolError> {
        let apply = self.apply;
        Ok(ErasedPlan {
            effect: object_of("a plan's effect", self.effect)?,
            apply: Box::new(move |call| object_of("what a plan applies", apply(call)?)),
            preview: self
                .preview
                .map(|p| Box::new(move || object_of("a plan's preview", p()?)) as ErasedStep),
        })
    }
}
