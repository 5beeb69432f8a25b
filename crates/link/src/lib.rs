//! Link model (being written).
