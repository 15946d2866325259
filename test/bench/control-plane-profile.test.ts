import { describe, expect, it } from 'vitest';
import {
  CUT,
  IN_FILTERS,
  OUTSIDE_HANDLERS,
  categorize,
  categoryOf,
  handlerOf,
  parseTraces,
  requestCounts,
} from '../../bench/control-plane-profile.ts';

/**
 * `go tool pprof -traces` as it prints kube-apiserver's samples (frames shortened to those
 * that matter): a JSON decode under the field manager of a status patch of a custom resource,
 * in the goroutine the API server runs writes in; a collector's assist during a Deployment
 * create; the HTTP/2 connection's TLS write.
 */
const TRACES = `File: kube-apiserver
Type: cpu
Duration: 5.20s, Total samples = 60ms ( 1.15%)
-----------+-------------------------------------------------------
      30ms   encoding/json.(*decodeState).object
             sigs.k8s.io/structured-merge-diff/v6/typed.(*ParseableType).FromUnstructured
             k8s.io/apimachinery/pkg/util/managedfields/internal.(*FieldManager).UpdateNoErrors
             k8s.io/apiextensions-apiserver/pkg/registry/customresource.(*StatusREST).Update
             k8s.io/apiserver/pkg/endpoints/handlers.(*patcher).patchResource.func3
             k8s.io/apiserver/pkg/endpoints/handlers/finisher.finishRequest.func1
-----------+-------------------------------------------------------
      10ms   runtime.scanobject
             runtime.gcDrainN
             runtime.gcAssistAlloc1
             runtime.gcAssistAlloc (inline)
             runtime.mallocgc
             k8s.io/kubernetes/pkg/apis/apps/v1.Convert_v1_Deployment_To_apps_Deployment
             k8s.io/apiserver/pkg/endpoints/handlers.CreateResource.createHandler.func1.2
-----------+-------------------------------------------------------
      20ms   crypto/tls.(*Conn).Write
             golang.org/x/net/http2.(*bufferedWriter).Flush
             golang.org/x/net/http2.(*serverConn).serve
-----------+-------------------------------------------------------
`;

describe('parseTraces', () => {
  const traces = parseTraces(TRACES);

  it('reads each sample with its CPU time and its stack, leaf first', () => {
    expect(traces.map((t) => t.seconds)).toEqual([0.03, 0.01, 0.02]);
    expect(traces[0]!.stack[0]).toBe('encoding/json.(*decodeState).object');
    expect(traces[2]!.stack.at(-1)).toBe('golang.org/x/net/http2.(*serverConn).serve');
  });

  it('names an inlined frame as its function', () => {
    expect(traces[1]!.stack).toContain('runtime.gcAssistAlloc');
  });
});

describe('categoryOf', () => {
  const [patch, create, tls] = parseTraces(TRACES).map((t) => t.stack);

  it('gives JSON decoding to the field manager that called it, not to the handler above', () => {
    expect(categoryOf(patch!)).toBe('field managers, managedFields (SSA)');
  });

  it("counts the collector's assist as garbage collection, not as the conversion it interrupted", () => {
    expect(categoryOf(create!)).toBe('Go garbage collection');
  });

  it('puts the connection’s TLS writes under HTTP/2 and TLS', () => {
    expect(categoryOf(tls!)).toBe('HTTP/1.1, HTTP/2, TLS, network');
  });

  it('counts verifying a client certificate on a request as authentication, not TLS', () => {
    expect(
      categoryOf([
        'crypto/ecdsa.VerifyASN1',
        'crypto/x509.(*Certificate).Verify',
        'k8s.io/apiserver/pkg/authentication/request/x509.(*Authenticator).AuthenticateRequest',
        'k8s.io/apiserver/pkg/endpoints/filters.withAuthentication.func1',
        'net/http.HandlerFunc.ServeHTTP',
      ]),
    ).toBe('authentication');
  });

  it('tells the YAML parse of an apply body apart from the rest of the patch', () => {
    expect(
      categoryOf([
        'sigs.k8s.io/yaml.yamlToJSONTarget',
        'sigs.k8s.io/yaml.unmarshal',
        'k8s.io/apiserver/pkg/endpoints/handlers.(*applyPatcher).applyPatchToCurrentObject',
      ]),
    ).toBe('apply: YAML parse of the body');
  });

  it('leaves a stack of generic packages alone as other', () => {
    expect(categoryOf(['runtime.memmove', 'reflect.Value.Set'])).toBe('other');
  });

  it('names a controller of kube-controller-manager after its package', () => {
    expect(
      categoryOf([
        'k8s.io/kubernetes/pkg/controller/garbagecollector.(*GraphBuilder).processGraphChanges',
      ]),
    ).toBe('controller: garbagecollector');
  });
});

describe('handlerOf', () => {
  const [patch, create, tls] = parseTraces(TRACES).map((t) => t.stack);

  it('tells a write of a custom resource in the goroutine the API server runs writes in', () => {
    expect(handlerOf(patch!)).toBe('patch, custom resource');
  });

  it('tells a create of a built-in kind by its handler’s closure', () => {
    expect(handlerOf(create!)).toBe('create, built-in kind');
  });

  it('knows a CRD handler’s closure, named after the package that inlined it', () => {
    expect(
      handlerOf([
        'encoding/json.Unmarshal',
        'k8s.io/apiextensions-apiserver/pkg/apiserver.(*crdHandler).serveResource.CreateResource.createHandler.func9.2',
      ]),
    ).toBe('create, custom resource');
  });

  it('tells a watch served by the list handler as a watch', () => {
    expect(
      handlerOf([
        'k8s.io/apiserver/pkg/endpoints/handlers.(*watchEncoder).Encode',
        'k8s.io/apiserver/pkg/endpoints/handlers.serveWatchHandler',
        'k8s.io/apiserver/pkg/endpoints/handlers.ListResource.func1',
      ]),
    ).toBe('watch, built-in kind');
  });

  it('says so when Go cut a deep stack before its handler’s frames', () => {
    const deep = Array.from({ length: 64 }, (_, i) =>
      i === 0 ? 'crypto/x509.(*Certificate).Verify' : 'net/http.HandlerFunc.ServeHTTP',
    );
    expect(handlerOf(deep)).toBe(CUT);
  });

  it('tells the filters a request passes before its handler', () => {
    expect(
      handlerOf([
        'k8s.io/apiserver/pkg/authentication/request/x509.(*Authenticator).AuthenticateRequest',
        'k8s.io/apiserver/pkg/endpoints/filters.withAuthentication.func1',
        'k8s.io/apiserver/pkg/server/filters.(*timeoutHandler).ServeHTTP.func1',
      ]),
    ).toBe(IN_FILTERS);
  });

  it('leaves the connection’s own work outside every handler', () => {
    expect(handlerOf(tls!)).toBe(OUTSIDE_HANDLERS);
  });
});

describe('categorize', () => {
  it('sums CPU seconds by category and keeps the leaves of what none claimed', () => {
    const traces = [
      ...parseTraces(TRACES),
      { seconds: 0.04, stack: ['runtime.memmove', 'reflect.Value.Set'] },
    ];
    const result = categorize(traces);
    expect(result.sampled).toBeCloseTo(0.1);
    expect(result.byCategory.get('field managers, managedFields (SSA)')).toBeCloseTo(0.03);
    expect([...result.unclaimed]).toEqual([['runtime.memmove', 0.04]]);
  });
});

describe('requestCounts', () => {
  it('sums apiserver_request_total by verb and resource, subresource apart, over codes', () => {
    const metrics = [
      '# TYPE apiserver_request_total counter',
      'apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 7',
      'apiserver_request_total{code="409",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 2',
      'apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="status",verb="PUT",version="v1"} 5',
      'apiserver_request_total_other{verb="POST",resource="pods"} 99',
    ].join('\n');
    expect(requestCounts(metrics)).toEqual({
      'POST deployments': 9,
      'PUT deployments/status': 5,
    });
  });
});
