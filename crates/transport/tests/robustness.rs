//! The parser and the reassembly buffer under hostile input.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use transport::reassembly::{Insert, Reassembly};
use transport::wire::{self, Frame, Packet, CHUNK, CONTROL_PN, MAX_RANGES};

/// A million inputs through the parser: random bytes of random length, and
/// valid datagrams of every type with random bytes flipped, truncated or
/// extended. None may panic; every accepted input must re-encode to
/// exactly the bytes it came from (so nothing is silently reinterpreted).
/// Seeded, so a failure reproduces.
#[test]
fn a_million_fuzzed_datagrams_never_panic_and_accepted_ones_round_trip() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xF00D);
    let payload = vec![0xA5u8; CHUNK];
    let mut ranges = [(0, 0); MAX_RANGES];
    ranges[0] = (100, 200);
    ranges[1] = (10, 50);
    let seeds: Vec<Packet<'_>> = vec![
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::Hello { total: 99, seed: 3 },
        },
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::HelloAck { max_chunks: 5 },
        },
        Packet {
            conn_id: 7,
            pn: 9,
            frame: Frame::Data {
                chunk: 2,
                payload: &payload[..700],
            },
        },
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::Ack {
                ranges,
                len: 2,
                ack_delay_us: 10,
                dsack: false,
                cum_chunk: 3,
                max_chunks: 8,
                ecn: None,
            },
        },
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::Ack {
                ranges,
                len: 2,
                ack_delay_us: 10,
                dsack: true,
                cum_chunk: 3,
                max_chunks: 8,
                ecn: Some(wire::EcnCounts {
                    ect0: 90,
                    ect1: 1,
                    ce: 12,
                }),
            },
        },
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::Fin {
                total: 1,
                digest: [9; 32],
            },
        },
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::Done {
                ok: true,
                received: 4,
            },
        },
        Packet {
            conn_id: 7,
            pn: CONTROL_PN,
            frame: Frame::Busy,
        },
    ];
    let encoded: Vec<Vec<u8>> = seeds
        .iter()
        .map(|p| {
            let mut v = Vec::new();
            wire::encode(p, &mut v);
            v
        })
        .collect();
    let mut out = Vec::new();
    let (mut accepted, mut total) = (0u64, 0u64);
    for i in 0..1_000_000u32 {
        let input: Vec<u8> = if i % 2 == 0 {
            let n = rng.gen_range(0..1600);
            (0..n).map(|_| rng.gen()).collect()
        } else {
            let mut v = encoded[rng.gen_range(0..encoded.len())].clone();
            match rng.gen_range(0..3) {
                0 => {
                    for _ in 0..rng.gen_range(1..4) {
                        let k = rng.gen_range(0..v.len());
                        v[k] ^= 1 << rng.gen_range(0..8);
                    }
                }
                1 => v.truncate(rng.gen_range(0..v.len())),
                _ => v.extend((0..rng.gen_range(1..20)).map(|_| rng.gen::<u8>())),
            }
            v
        };
        total += 1;
        if let Ok(p) = wire::decode(&input) {
            accepted += 1;
            wire::encode(&p, &mut out);
            assert_eq!(out, input, "accepted input does not round-trip");
        }
    }
    assert_eq!(total, 1_000_000);
    // Bit flips in payload bytes and ids leave valid datagrams: some must
    // be accepted, or the harness is not reaching the frame parsers.
    assert!(accepted > 10_000, "only {accepted} accepted");
}

proptest! {
    /// Any arrival order, with duplicates, of a stream cut into chunks
    /// delivers exactly the stream, never buffers more than the window,
    /// and refuses chunks beyond it.
    #[test]
    fn reassembly_delivers_the_stream_in_order(
        len in 1usize..(CHUNK * 40),
        window in 1u64..50,
        order in proptest::collection::vec(0usize..1000, 1..400),
    ) {
        let stream: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let chunks: Vec<&[u8]> = stream.chunks(CHUNK).collect();
        let mut r = Reassembly::new(window);
        let mut got = Vec::new();
        // The arrivals: the random order, then every chunk in order (as
        // retransmissions eventually supply them).
        let arrivals: Vec<usize> = order.iter().map(|o| o % chunks.len())
            .chain(0..chunks.len()).collect();
        for c in arrivals {
            let res = r.insert(c as u64, chunks[c]);
            if (c as u64) >= r.limit() {
                prop_assert_eq!(res, Insert::OutOfWindow);
            }
            prop_assert!(r.buffered() as u64 <= window);
            while let Some(d) = r.pop() {
                got.extend_from_slice(&d);
            }
        }
        prop_assert_eq!(got, stream);
        prop_assert!(r.complete(len as u64));
    }

    /// Any ACK, with or without ECN counts, round-trips; every strict
    /// prefix of it is an error (never a panic, never a shorter frame),
    /// and so is any byte appended.
    #[test]
    fn acks_with_and_without_ecn_round_trip(
        tops in proptest::collection::vec(1u64..1_000_000, 1..=MAX_RANGES),
        ack_delay_us: u32,
        dsack: bool,
        cum_chunk in 0u64..1_000_000,
        extra in 0u64..1_000_000,
        counts in proptest::option::of((any::<u64>(), any::<u64>(), any::<u64>())),
        junk: u8,
    ) {
        // Disjoint ranges, highest first: descending tops, each range one
        // packet wide below a gap.
        let mut ranges = [(0, 0); MAX_RANGES];
        let mut hi = 10_000_000u64;
        for (r, t) in ranges.iter_mut().zip(&tops) {
            let lo = hi.saturating_sub(t % 1000);
            *r = (lo, hi);
            hi = lo.saturating_sub(2 + t % 50);
        }
        let p = Packet {
            conn_id: 5,
            pn: CONTROL_PN,
            frame: Frame::Ack {
                ranges,
                len: tops.len() as u8,
                ack_delay_us,
                dsack,
                cum_chunk,
                max_chunks: cum_chunk + extra,
                ecn: counts.map(|(ect0, ect1, ce)| wire::EcnCounts { ect0, ect1, ce }),
            },
        };
        let mut buf = Vec::new();
        wire::encode(&p, &mut buf);
        prop_assert_eq!(wire::decode(&buf), Ok(p.clone()));
        for n in 0..buf.len() {
            prop_assert!(wire::decode(&buf[..n]).is_err(), "prefix {} accepted", n);
        }
        buf.push(junk);
        prop_assert!(wire::decode(&buf).is_err());
    }

    /// A peer that lies about sizes is refused: a short chunk followed by
    /// data past it, or an oversized chunk, never enters the buffer.
    #[test]
    fn inconsistent_chunks_are_refused(short in 1usize..CHUNK, at in 0u64..10) {
        let mut r = Reassembly::new(64);
        prop_assert_eq!(r.insert(at, &vec![1u8; short]), Insert::Accepted);
        prop_assert_eq!(r.insert(at + 1, &vec![1u8; CHUNK]), Insert::Invalid);
        prop_assert_eq!(r.insert(at + 2, &vec![1u8; CHUNK + 1]), Insert::Invalid);
    }
}
