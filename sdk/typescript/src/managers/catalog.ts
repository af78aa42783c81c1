import type { Transport } from '../transport.js';
import type { Prerequisites, TypeDefinition, TypeList, TypeSchema } from '../types.js';

/** GET /workflows/types…: the workflow types, their JSON Schemas, definitions and prerequisites. */
export class CatalogManager {
  constructor(private readonly transport: Transport) {}

  async listTypes(options: { prefix?: string } = {}): Promise<TypeList> {
    return (await this.transport.request<TypeList>('/workflows/types', { query: { prefix: options.prefix }, idempotent: true })).body;
  }

  async getSchema(workflowType: string): Promise<TypeSchema> {
    return this.get<TypeSchema>(workflowType, '/schema');
  }

  async getDefinition(workflowType: string): Promise<TypeDefinition> {
    return this.get<TypeDefinition>(workflowType, '');
  }

  async getPrerequisites(workflowType: string): Promise<Prerequisites> {
    return this.get<Prerequisites>(workflowType, '/prerequisites');
  }

  private async get<T>(workflowType: string, suffix: string): Promise<T> {
    return (await this.transport.request<T>(`/workflows/types/${encodeURIComponent(workflowType)}${suffix}`, { idempotent: true })).body;
  }
}
