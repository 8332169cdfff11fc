import type { Clock } from '../../src/core/ports.js';

/** A clock tests move by hand. */
export class TestClock implements Clock {
  constructor(private t = Date.now()) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
