// Calls to /api/v1 typed by the API's own OpenAPI document (./schema.ts, generated from it by
// scripts/api-types.sh): a route must be one the API serves for that method, and its path and
// query parameters, its body and its answer have the document's types.
import { qs, request } from "./client";
import type { components, paths } from "./schema";

/** The API's schemas by name, as the OpenAPI document defines them. */
export type Schemas = components["schemas"];

type Verb = "get" | "post" | "patch" | "put" | "delete";
/** A route below /api/v1, as the document spells it ("/servers/{server_id}/curve"). */
type Route = keyof paths extends infer P ? (P extends `/api/v1${infer R}` ? R : never) : never;
type Operation<R extends Route, V extends Verb> = NonNullable<paths[`/api/v1${R}` & keyof paths][V]>;

/** The routes that answer `verb`. */
export type RoutesFor<V extends Verb> = { [R in Route]: paths[`/api/v1${R}` & keyof paths][V] extends undefined ? never : R }[Route];

type Parameters_<O> = O extends { parameters: infer P } ? P : never;
type PathParams<O> = Parameters_<O> extends { path: infer X } ? X : never;
type QueryParams<O> = Parameters_<O> extends { query?: infer Q } ? Q : never;
type RequiredQuery<O> = Parameters_<O> extends { query: object } ? true : false;
type JsonBody<RB> = RB extends { content: { "application/json": infer B } } ? B : never;
type Body<O> = O extends { requestBody?: infer RB } ? JsonBody<NonNullable<RB>> : never;
type Json<X> = X extends { content: { "application/json": infer T } } ? T : void;
type Answer<Rs> = 200 extends keyof Rs
  ? Json<Rs[200]>
  : 201 extends keyof Rs
    ? Json<Rs[201]>
    : 202 extends keyof Rs
      ? Json<Rs[202]>
      : void;

/** What a successful call of `verb` on `route` answers: the document's 2xx JSON (void for 204). */
export type Answered<V extends Verb, R extends RoutesFor<V>> = Operation<R, V> extends { responses: infer Rs } ? Answer<Rs> : never;

type Args<O> = ([PathParams<O>] extends [never] ? { path?: never } : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never]
    ? { query?: never }
    : RequiredQuery<O> extends true
      ? { query: QueryParams<O> }
      : { query?: QueryParams<O> }) &
  ([Body<O>] extends [never] ? { body?: never } : { body: Body<O> }) & { signal?: AbortSignal };

/** The route with its {name} placeholders filled in, URL-encoded. */
export function fillRoute(route: string, params: Record<string, string | number> | undefined): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params?.[name];
    if (v === undefined) throw new Error(`${route}: no value for {${name}}`);
    return encodeURIComponent(String(v));
  });
}

/**
 * One call to /api/v1: `api("get", "/servers/{server_id}/curve", { path: { server_id: id } })`.
 * A POST without a body sends `{}`, as the API's JSON routes expect.
 */
export function api<V extends Verb, R extends RoutesFor<V>>(verb: V, route: R, args: Args<Operation<R, V>>): Promise<Answered<V, R>> {
  const a = args as { path?: Record<string, string | number>; query?: Parameters<typeof qs>[0]; body?: unknown; signal?: AbortSignal };
  const url = fillRoute(route, a.path) + (a.query ? qs(a.query) : "");
  const method = verb.toUpperCase() as Uppercase<Verb>;
  return request<Answered<V, R>>(method, url, a.body ?? (verb === "post" ? {} : undefined), a.signal);
}
