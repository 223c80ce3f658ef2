//! Writes a network of pseudo-random weights (`Network::random`) for benchmarks and for
//! trying the `--eval nnue` paths before a trained network is at hand:
//! `cargo run --release --example random_net -- OUT.nnue [HIDDEN] [SEED]`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: random_net OUT.nnue [HIDDEN] [SEED]")?;
    let hidden = args.next().map_or(Ok(128), |h| h.parse())?;
    let seed = args.next().map_or(Ok(1), |s| s.parse())?;
    let net = pawnstorm::nnue::Network::random(hidden, seed)?;
    net.save(std::path::Path::new(&out))?;
    eprintln!("{out}: random network of {hidden} hidden, seed {seed}");
    Ok(())
}
