import { SecretBox } from './secret-box';

/** Organization ids as the service issues them (`org_` + hex); a label outside this shape is refused before any key is derived. */
export const ORGANIZATION_ID = /^org_[A-Za-z0-9_-]{1,128}$/;

const MAX_CACHED_ORGANIZATIONS = 10_000;

/**
 * The keys one process holds for Temporal payloads: an organization's payloads are
 * sealed with that organization's key; platform payloads (no organization: the format
 * every payload had before organizations were bound, and what the worker writes for a
 * run whose organization it does not know) with the master key's `temporal-payloads` key.
 * The first box of each list encrypts; the rest (keys being rotated out) only decrypt.
 */
export interface PayloadKeys {
  organizationBoxes(organization: string): SecretBox[];
  platformBoxes(): SecretBox[];
}

/** The service's own keys: every organization's, derived on demand from ENGINE_SECRET_KEY (and previous master keys). */
export class MasterPayloadKeys implements PayloadKeys {
  private readonly masters: Buffer[];
  private readonly platform: SecretBox[];
  /** Derived keys by organization, bounded: labels come from payloads anyone may submit to the codec endpoint. */
  private readonly organizations = new Map<string, SecretBox[]>();

  constructor(master: Buffer, previousMasters: Buffer[] = []) {
    this.masters = [master, ...previousMasters];
    this.platform = this.masters.map((key) => SecretBox.derive(key, 'temporal-payloads'));
  }

  organizationBoxes(organization: string): SecretBox[] {
    let boxes = this.organizations.get(organization);
    if (!boxes) {
      boxes = this.masters.map((key) => new SecretBox(SecretBox.organizationPayloadKey(key, organization)));
      if (this.organizations.size >= MAX_CACHED_ORGANIZATIONS) this.organizations.delete(this.organizations.keys().next().value!);
      this.organizations.set(organization, boxes);
    }
    return boxes;
  }

  platformBoxes(): SecretBox[] {
    return this.platform;
  }
}

/** What a service starting runs directly holds: one organization's key, nothing else. */
export class OrganizationPayloadKey implements PayloadKeys {
  private readonly box: SecretBox;

  constructor(
    readonly organization: string,
    key: Buffer,
  ) {
    if (!ORGANIZATION_ID.test(organization)) throw new Error(`"${organization}" is not an organization id (org_…)`);
    this.box = new SecretBox(key);
  }

  organizationBoxes(organization: string): SecretBox[] {
    return organization === this.organization ? [this.box] : [];
  }

  platformBoxes(): SecretBox[] {
    return [];
  }
}
