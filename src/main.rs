//! Browser entry point: mount the root component. Everything else lives in the library.

fn main() {
    leptos::mount::mount_to_body(idempotency_lab::app::App);
}
