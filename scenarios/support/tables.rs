//! Tables of the contract: one grammar or matrix on one surface, every
//! case's answer collected (a wrong answer is listed, not fatal), and
//! independent requests sent at once.

use grantgate_engine::prelude::*;

/// One grammar on one surface: every case's answer, and those that are not
/// the spec's.
pub(crate) struct Table {
    name: String,
    answers: Vec<(String, String)>,
    wrong: Vec<String>,
}

impl Table {
    /// An empty table for `grammar` on `surface`.
    pub(crate) fn new(grammar: &str, surface: &str) -> Self {
        Table {
            name: format!("{grammar} on {surface}"),
            answers: Vec::new(),
            wrong: Vec::new(),
        }
    }

    /// Records `case`'s answer `got` and whether the spec allows it.
    pub(crate) fn check(&mut self, case: &str, allowed: bool, got: impl Into<String>) {
        let got = got.into();
        if !allowed {
            self.wrong.push(format!("{case}: {got}"));
        }
        self.answers.push((case.to_owned(), got));
    }

    /// Records a native answer whose status must be one of `allowed`; a
    /// refusal also carries the spec's error body.
    pub(crate) fn status(&mut self, case: &str, answer: &Answer, allowed: &[u16]) {
        let mut ok = allowed.contains(&answer.status);
        if ok && answer.status >= 400 {
            ok = answer.error().is_ok();
        }
        self.check(case, ok, answer.status.to_string());
    }

    /// Records a tool reply that must be the error `code` (and, when given,
    /// name `field`).
    pub(crate) fn tool_error(
        &mut self,
        case: &str,
        reply: &ToolReply,
        code: &str,
        field: Option<&str>,
    ) {
        let got = format!(
            "{}{}",
            reply.error_code().unwrap_or("success"),
            reply
                .error_field()
                .map(|f| format!(" ({f})"))
                .unwrap_or_default()
        );
        let ok = reply.is_error
            && reply.error_code() == Some(code)
            && (field.is_none() || reply.error_field() == field)
            && reply.structured.is_none();
        self.check(case, ok, got);
    }

    /// Records a tool reply that must succeed, with `native_status` where
    /// the tool's result carries one (the list's does not).
    pub(crate) fn tool_ok(&mut self, case: &str, reply: &ToolReply, native_status: Option<i64>) {
        let ok =
            !reply.is_error && reply.structured.is_some() && reply.native_status() == native_status;
        let got = match reply.error_code() {
            Some(code) => code.to_owned(),
            None => format!("ok {}", json_text(&reply.native_status())),
        };
        self.check(case, ok, got);
    }

    /// Gives every case so far the one name `case` (cases whose names hold
    /// values that differ between runs, observed for parity as one class);
    /// returns how many there are.
    pub(crate) fn name_every_case(&mut self, case: &str) -> usize {
        self.answers.iter_mut().for_each(|(c, _)| *c = case.into());
        self.answers.len()
    }

    /// One check for the whole table, and its answers observed for parity.
    pub(crate) fn finish(self, ctx: &Ctx) -> Step<usize> {
        let cases = self.answers.len();
        ctx.observe(&self.name, &self.answers);
        ctx.expect(
            &format!("{}: all {cases} cases answer as the spec says", self.name),
            self.wrong.is_empty(),
            &format!("{} wrong: {}", self.wrong.len(), self.wrong.join("; ")),
        )?;
        Ok(cases)
    }
}

/// Sends independent native requests at once (the Core serves them in any
/// order) and returns their answers in the order given: a table of many
/// cases then costs about as long as its slowest request.
pub(crate) async fn at_once<F>(calls: impl IntoIterator<Item = F>) -> Step<Vec<Answer>>
where
    F: Future<Output = Step<Answer>>,
{
    join_all(calls).await.into_iter().collect()
}
