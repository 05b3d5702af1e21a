//! Family 20's model on its own, with the unit tests in its file: the model
//! is plain code over the prelude, so it compiles here without the rest of
//! the catalogue (which the library's unit tests would compile again).

#[allow(dead_code)] // (what only the explorer's other files use)
#[path = "../explore/model.rs"]
mod model;
