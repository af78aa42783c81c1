import type { Transport } from '../transport.js';
import type { Composition, CompositionCreated, CompositionDetail, CompositionInput } from '../types.js';

/** /compositions: built-in types composed into a type of the organization, `virtual.<uuid>@<version>`. */
export class CompositionsManager {
  constructor(private readonly transport: Transport) {}

  async create(input: CompositionInput): Promise<CompositionCreated> {
    return (await this.transport.request<CompositionCreated>('/compositions', { method: 'POST', body: input, idempotent: false })).body;
  }

  /** The latest version of each, newest first. */
  async list(): Promise<Composition[]> {
    return (await this.transport.request<{ compositions: Composition[] }>('/compositions', { idempotent: true })).body.compositions;
  }

  /** The latest version and every version. */
  async get(compositionUuid: string): Promise<CompositionDetail> {
    return (await this.transport.request<CompositionDetail>(this.path(compositionUuid), { idempotent: true })).body;
  }

  /** Creates the next version; running and startable earlier versions are untouched. */
  async update(compositionUuid: string, input: CompositionInput): Promise<CompositionCreated> {
    return (await this.transport.request<CompositionCreated>(this.path(compositionUuid), { method: 'PUT', body: input, idempotent: false })).body;
  }

  private path(compositionUuid: string) {
    return `/compositions/${encodeURIComponent(compositionUuid)}`;
  }
}
