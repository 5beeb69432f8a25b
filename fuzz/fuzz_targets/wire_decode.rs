//! Any bytes through the datagram parser: no panic, and an accepted
//! datagram re-encodes to exactly its input.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = transport::wire::decode(data) {
        let mut out = Vec::new();
        transport::wire::encode(&p, &mut out);
        assert_eq!(out, data);
    }
});
