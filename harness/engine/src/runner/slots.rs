//! `--jobs` as slots: a trial holds one while it works and gives it back
//! while it only waits for a clock (an expiry the contract has no way to
//! hasten), so another trial runs in that idle time instead of the run
//! waiting with it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A run's `--jobs` slots.
pub(crate) type Pool = Arc<Semaphore>;

/// One trial's slot. Cloned into the trial's [`crate::ctx::Ctx`]; given back
/// to the pool when the last clone is dropped (the trial's end).
#[derive(Clone)]
pub struct Slot {
    pool: Pool,
    held: Arc<Mutex<Option<OwnedSemaphorePermit>>>,
}

impl Slot {
    /// Waits for a free slot of `pool`.
    pub(crate) async fn take(pool: &Pool) -> Slot {
        let permit = pool.clone().acquire_owned().await.expect("never closed");
        Slot {
            pool: pool.clone(),
            held: Arc::new(Mutex::new(Some(permit))),
        }
    }

    /// Sleeps `d` without the slot, then queues for one. The launcher drops
    /// and renews its own request after every trial that finishes, so the
    /// slot a finished trial frees goes to a trial already queued here
    /// before a new trial starts.
    pub(crate) async fn idle(&self, d: Duration) {
        self.lend_while(tokio::time::sleep(d)).await
    }
}

impl Slot {
    /// Runs `work` without the slot, then queues for one, as [`Slot::idle`]
    /// does: for a wait on something other than this machine's CPU for the
    /// trial (the Docker engine creating and starting a container).
    pub(crate) async fn lend_while<T>(&self, work: impl Future<Output = T>) -> T {
        drop(self.held.lock().unwrap().take());
        let out = work.await;
        let permit = self
            .pool
            .clone()
            .acquire_owned()
            .await
            .expect("never closed");
        *self.held.lock().unwrap() = Some(permit);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn an_idle_trial_lends_its_slot_and_gets_one_back() {
        let pool: Pool = Arc::new(Semaphore::new(1));
        let waiting = Slot::take(&pool).await;
        assert_eq!(pool.available_permits(), 0);
        let started = Instant::now();
        let idle = {
            let w = waiting.clone();
            tokio::spawn(async move { w.idle(Duration::from_millis(300)).await })
        };
        // The single slot is free while the first trial waits.
        let other = tokio::time::timeout(Duration::from_millis(200), Slot::take(&pool))
            .await
            .expect("the slot is lent during the wait");
        assert!(started.elapsed() < Duration::from_millis(200));
        drop(other);
        idle.await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(
            pool.available_permits(),
            0,
            "the waker holds the slot again"
        );
        drop(waiting);
        assert_eq!(pool.available_permits(), 1, "the trial's end gives it back");
    }

    #[tokio::test]
    async fn a_trial_lends_its_slot_while_it_waits_for_other_work() {
        let pool: Pool = Arc::new(Semaphore::new(1));
        let starting = Slot::take(&pool).await;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let lent = {
            let s = starting.clone();
            tokio::spawn(async move { s.lend_while(async { rx.await.unwrap() }).await })
        };
        let other = tokio::time::timeout(Duration::from_secs(5), Slot::take(&pool))
            .await
            .expect("the slot is lent during the work");
        tx.send(()).unwrap();
        tokio::task::yield_now().await;
        assert!(
            !lent.is_finished(),
            "the lender queues until a slot is free"
        );
        drop(other);
        lent.await.unwrap();
        assert_eq!(
            pool.available_permits(),
            0,
            "the lender holds the slot again"
        );
    }
}
