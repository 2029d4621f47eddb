//! An S3-compatible server on 127.0.0.1 that serves the folders under ROOT as buckets (s3s-fs), for
//! trying `s3://` inputs without a cloud account and for `scripts/bench`'s object-storage part.
//!
//! ```sh
//! cargo run --release --example s3_server -- ROOT [PORT]
//! ```
//!
//! Prints `http://127.0.0.1:PORT` once it listens, then serves until killed. Requests must be signed
//! with the access key and secret in `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` when both are
//! set; otherwise any request is served.

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: s3_server ROOT [PORT]");
        std::process::exit(2);
    };
    let port: u16 = args.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let fs = match s3s_fs::FileSystem::new(&root) {
        Ok(fs) => fs,
        Err(e) => {
            eprintln!("s3_server: {root}: {e:?}");
            std::process::exit(2);
        }
    };
    let mut builder = s3s::service::S3ServiceBuilder::new(fs);
    if let (Ok(key), Ok(secret)) = (
        std::env::var("AWS_ACCESS_KEY_ID"),
        std::env::var("AWS_SECRET_ACCESS_KEY"),
    ) {
        builder.set_auth(s3s::auth::SimpleAuth::from_single(key, secret));
    }
    let service = builder.build();
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind 127.0.0.1");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    println!("http://{}", listener.local_addr().expect("bound address"));
    std::io::stdout().flush().expect("stdout");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                continue;
            };
            let service = service.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                    .await;
            });
        }
    });
}
