'use strict';
// An in-memory job queue: the endpoint enqueues parsed events, a worker drains them later.
class Queue {
  constructor(worker) {
    this.jobs = [];
    this.worker = worker;
    this.draining = false;
  }

  push(job) {
    return new Promise((resolve) => {
      this.jobs.push({ job, resolve });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => this.drain());
      }
    });
  }

  drain() {
    while (this.jobs.length > 0) {
      const { job, resolve } = this.jobs.shift();
      resolve(this.worker(job));
    }
    this.draining = false;
  }
}

module.exports = { Queue };
