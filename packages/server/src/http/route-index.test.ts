import { describe, expect, it } from 'vitest';
import { RouteIndex } from './route-index.js';

describe('RouteIndex', () => {
  const index = new RouteIndex();
  index.add('GET', '/api/settings');
  index.add(['PUT'], '/api/settings');
  index.add('GET', '/api/users/:id(^\\d+$)');
  index.add('DELETE', '/api/users/:id(^\\d+$)');
  index.add('POST', '/api/resources/*');
  index.add('GET', '/api/share/:hash/files');
  index.add('GET', '/a::b');

  it('collects the methods of every route matching a path', () => {
    expect(index.allowedMethods('/api/settings')).toEqual(['GET', 'PUT']);
    expect(index.allowedMethods('/api/users/12')).toEqual(['DELETE', 'GET']);
    expect(index.allowedMethods('/api/resources/some/where.txt')).toEqual(['POST']);
    expect(index.allowedMethods('/api/share/abc/files')).toEqual(['GET']);
    expect(index.allowedMethods('/a:b')).toEqual(['GET']);
  });

  it('honours parameter constraints and exact paths', () => {
    expect(index.allowedMethods('/api/users/abc')).toEqual([]);
    expect(index.allowedMethods('/api/users/')).toEqual([]);
    expect(index.allowedMethods('/api/settings/')).toEqual([]);
    expect(index.allowedMethods('/api/settingsX')).toEqual([]);
    expect(index.allowedMethods('/api/share/a/b/files')).toEqual([]);
  });
});
