//! stub
use grantgate_engine::prelude::*;

pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
