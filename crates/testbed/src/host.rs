//! The machine's facts, from the `hostfacts` crate: it sits below
//! `kernel-cc` and `tcp-probe`, which read them too, so there is one
//! reader whoever asks. Re-exported here for the commands that use the
//! rest of the testbed.

pub use hostfacts::{available_congestion_controls, check_offered, is_root, AVAILABLE};
