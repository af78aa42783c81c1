/** `get-resource-information` → `getResourceInformation`. */
export function camelCase(segment: string): string {
  const words = segment.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w, i) => (i === 0 ? w[0]!.toLowerCase() + w.slice(1) : w[0]!.toUpperCase() + w.slice(1))).join('');
  return /^[0-9]/.test(joined) ? `_${joined}` : joined;
}

/** `esign.resources.get-resource-information` → `['esign', 'resources', 'getResourceInformation']`. */
export function bindingPath(workflowType: string): string[] {
  const path = workflowType.split('.').map(camelCase);
  if (path.some((p) => !p)) throw new Error(`workflow type ${JSON.stringify(workflowType)} has an empty segment`);
  return path;
}

/**
 * `esign.resources.get-resource-information` → `EsignResourcesGetResourceInformation`,
 * `virtual.daaa9a67-…@1` → `VirtualDaaa9A67…1`.
 */
export function typeName(workflowType: string): string {
  const name = bindingPath(workflowType)
    .map((p) => p.replace(/^_/, '').replace(/^./, (c) => c.toUpperCase()))
    .join('');
  // Already in the form json-schema-to-typescript declares (a letter after a digit upper-cased, no
  // leading digit), else the bindings would name an interface the generated file does not declare.
  return (/^[0-9]/.test(name) ? `_${name}` : name).replace(/[0-9][a-z]/g, (m) => m.toUpperCase());
}

/**
 * Each workflow type's interface base name, distinct: types whose names differ only where
 * `typeName` folds them (`a.b-c` and `a-b.c` are both `ABC`) get 2, 3 … after the first, in the
 * order given (sorted, so a name does not change while the catalog does not). Two interfaces of
 * one name would merge into a type that is neither.
 */
export function interfaceNames(workflowTypes: readonly string[]): Map<string, string> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const workflowType of workflowTypes) {
    const base = typeName(workflowType);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}${n}`;
    taken.add(name);
    names.set(workflowType, name);
  }
  return names;
}

export interface BindingTree {
  [segment: string]: BindingTree | string;
}

/** The nested object of start functions: leaves are workflow types. A type that is also another's namespace is refused. */
export function bindingTree(workflowTypes: readonly string[]): BindingTree {
  const root: BindingTree = {};
  for (const workflowType of workflowTypes) {
    const path = bindingPath(workflowType);
    let node = root;
    path.forEach((segment, i) => {
      const existing = node[segment];
      const last = i === path.length - 1;
      if (last) {
        if (existing !== undefined) throw new Error(`workflow types collide at ${path.join('.')} (${workflowType})`);
        node[segment] = workflowType;
        return;
      }
      if (typeof existing === 'string') throw new Error(`workflow type ${existing} is also a namespace of ${workflowType}`);
      node = (node[segment] ??= {}) as BindingTree;
    });
  }
  return root;
}
