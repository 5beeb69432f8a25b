//! What every controller of one [`crate::Endpoint`] shares: the recipe its
//! controllers are made from (configuration, a user's algorithm, seeds, the
//! observer) and the connection counter. A leaf of the crate, so the
//! endpoint (which makes controllers) and the controller (which reads
//! this) do not import each other.

use bbrlab_adapter::Recipe;
use std::sync::atomic::AtomicU64;

/// What every controller of one [`Endpoint`](crate::Endpoint) shares.
pub(crate) struct Shared {
    pub(crate) recipe: Recipe,
    pub(crate) next_id: AtomicU64,
}
