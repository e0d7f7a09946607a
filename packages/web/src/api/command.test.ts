import { describe, expect, it } from 'vitest';
import { commandEndOf, commandURL } from './command';

describe('command endpoint', () => {
  it('addresses the folder over ws or wss, with each segment encoded', () => {
    expect(commandURL('/docs/a b/', { protocol: 'http:', host: 'files.example:8080' })).toBe(
      'ws://files.example:8080/api/command/docs/a%20b/',
    );
    expect(commandURL('/', { protocol: 'https:', host: 'files.example' })).toBe(
      'wss://files.example/api/command/',
    );
  });

  it('reads how a command ended from the close code', () => {
    expect(commandEndOf(1000, 'exit status 0')).toEqual({ kind: 'success' });
    expect(commandEndOf(1008, '')).toEqual({ kind: 'refused' });
    expect(commandEndOf(1009, '')).toEqual({ kind: 'too-long' });
    expect(commandEndOf(1011, 'exit status 2')).toEqual({ kind: 'failed', reason: 'exit status 2' });
    expect(commandEndOf(1006, '')).toEqual({ kind: 'disconnected' });
  });
});
