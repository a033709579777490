"""CEL rules (``x-kubernetes-validations``) as the API server evaluates them (issue 43): Kubernetes' CEL libraries,
each function checked on cases of Kubernetes' own test tables (k8s.io/apiserver pkg/cel/library/*_test.go, cel-go
ext/*_test.go) where they exist, the binding of ``self``/``oldSelf``, ``messageExpression``, ``reason``,
``fieldPath``, the cost limits, and an unimplemented function named, never passed."""
from __future__ import annotations

import time

import pytest

from omerender.kube import celrules
from omerender.kube.celrules import Failure, evaluate

OK = None


def value_of(expression: str, self=None):
    """The expression's value, or its error as the API server words it."""
    assert celrules._compile_problem(expression) is None
    result = celrules._run(expression, celrules._Node(self))
    return result.text if isinstance(result, celrules._Error) else result


def failures(rule: str, self, **more) -> list[Failure]:
    return evaluate([{"rule": rule, **more}], self, "spec")


LIBRARY = [
    # strings extension (cel-go ext/strings_test.go)
    ("'tacocat'.charAt(3)", "o"), ("'tacocat'.charAt(7)", ""), ("'©αT'.charAt(1)", "α"),
    ("'tacocat'.charAt(30)", "index out of range: 30"),
    ("'tacocat'.indexOf('')", 0), ("'tacocat'.indexOf('ac')", 1), ("'tacocat'.indexOf('none') == -1", True),
    ("'tacocat'.indexOf('', 3) == 3", True), ("'tacocat'.indexOf('a', 3) == 5", True),
    ("'ta©o©αT'.indexOf('©') == 2", True), ("'ta©o©αT'.indexOf('©', 3) == 4", True),
    ("'tacocat'.indexOf('a', 30)", -1), ("'tacocat'.indexOf('a', -1)", "index out of range: -1"),
    ("'tacocat'.lastIndexOf('')", 7), ("'tacocat'.lastIndexOf('at')", 5), ("'tacocat'.lastIndexOf('a', 3)", 1),
    ("'ta©o©αT'.lastIndexOf('©')", 4), ("'tacocat'.lastIndexOf('none')", -1),
    ("'TacoCat'.lowerAscii()", "tacocat"), ("'TacoCÆt Xii'.lowerAscii()", "tacocÆt xii"),
    ("'tacoCat'.upperAscii()", "TACOCAT"), ("'tacoCαt'.upperAscii()", "TACOCαT"),
    ("'12 days 12 hours'.replace('{0}', '2')", "12 days 12 hours"),
    ("'{0} days {0} hours'.replace('{0}', '2')", "2 days 2 hours"),
    ("'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23')", "2 days 23 hours"),
    ("'hello world'.split(' ')", ["hello", "world"]), ("'hello world events!'.split(' ', 0)", []),
    ("'hello world events!'.split(' ', 1)", ["hello world events!"]),
    ("'o©o©o©o'.split('©', -1)", ["o", "o", "o", "o"]), ("'hello'.split('', 2)", ["h", "ello"]),
    ("'tacocat'.substring(4)", "cat"), ("'tacocat'.substring(0, 4)", "taco"),
    ("'ta©o©αT'.substring(2, 6)", "©o©α"),
    ("'tacocat'.substring(40)", "index out of range: 40"),
    ("'tacocat'.substring(4, 3)", "invalid substring range. start: 4, end: 3"),
    ("' \\ttrim\\n    '.trim()", "trim"), ("'\\u00a0 trim\\u2028'.trim()", "trim"), ("'\\x1ftrim'.trim()", "\x1ftrim"),
    ("['x', 'y'].join()", "xy"), ("['x', 'y'].join('-')", "x-y"), ("[].join()", ""),
    ("strings.quote('first\\nsecond')", '"first\\nsecond"'), ("strings.quote('bell\\a')", '"bell\\a"'),
    ("strings.quote('\"')", '"\\""'),
    ("'this is a string: %s\\nand an integer: %d'.format(['str', 42])", "this is a string: str\nand an integer: 42"),
    ("'a double substituted with %%s: %s'.format([64.2])", "a double substituted with %s: 64.2"),
    ("'%f'.format([3.14])", "3.140000"), ("'%.2f'.format([3.14159])", "3.14"),
    ("'5 in binary: %b'.format([5])", "5 in binary: 101"), ("'26 in hex: %x'.format([26])", "26 in hex: 1a"),
    ("'26 in hex (uppercase): %X'.format([26])", "26 in hex (uppercase): 1A"),
    ("'30 in octal: %o'.format([30])", "30 in octal: 36"),
    ("'duration: %s'.format([duration('1h45m47s')])", "duration: 6347s"),
    ("'true bool: %s - false bool: %s\\nbinary bool: %b'.format([true, false, true])",
     "true bool: true - false bool: false\nbinary bool: 1"),
    ("'%s %s'.format(['a'])", "index 1 out of range"),
    ("'%z'.format([1])", 'could not parse formatting clause: unrecognized formatting clause "z"'),
    ("bool('true') && !bool('f')", True),
    ("bool('yes')", "type conversion error from 'string' to 'bool'"),
    # durations as Go's time.ParseDuration reads them (cel-go's duration(string))
    ("duration('1h30m') == duration('90m') && duration('-1.5s') < duration('0')", True),
    ("duration('1µs') == duration('1us') && duration('1μs') == duration('1000ns')", True),
    ("duration('.5s') == duration('500ms') && duration('+5s') == duration('5s')", True),
    ("duration('1h-5m')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
    ("duration('1H')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
    ("duration('2562048h')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
    ("duration('')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
    ("duration('2562047h') > duration('1h')", True),
    # Kubernetes' lists library (pkg/cel/library/lists.go)
    ("[1, 2, 3].isSorted()", True), ("['a', 'b', 'b', 'c'].isSorted()", True), ("[2.0, 1.0].isSorted()", False),
    ("[1, 2, 3].sum()", 6), ("[1.0, 2.0, 3.0].sum()", 6.0), ("[].sum()", 0),
    ("[9223372036854775807, 1].sum()", "integer overflow"),
    ("[1, 2, 3].min()", 1), ("['d', 'a', 'b', 'c'].max()", "d"), ("[].min()", "min called on empty list"),
    ("[].max()", "max called on empty list"),
    ("[1, 2, 2, 3].indexOf(2)", 1), ("['a', 'b', 'b', 'c'].lastIndexOf('b')", 2), ("[1.0].indexOf(1.1)", -1),
    ("[[1], [2]].indexOf([2])", 1), ("[1, 2].includes(2) && ![1, 2].includes(3)", True),
    # cel-go's lists extension (ext/lists_test.go)
    ("[1, 2, 3, 4].slice(1, 3)", [2, 3]), ("[1, 2, 3, 4].slice(4, 4)", []),
    ("[1, 2, 3, 4].slice(-5, 10)", "cannot slice(-5, 10), negative indexes not supported"),
    ("[1, 2, 3, 4].slice(3, 1)", "cannot slice(3, 1), start index must be less than or equal to end index"),
    ("[1, 2, 3, 4].slice(0, 10)", "cannot slice(0, 10), list is length 4"),
    ("[1, [2, [3, 4]]].flatten()", [1, 2, [3, 4]]), ("[1, [2, [3, 4]]].flatten(2)", [1, 2, 3, 4]),
    ("[].flatten(-1)", "level must be non-negative"), ("[1, 2, 2, 3, 3, 3].distinct()", [1, 2, 3]),
    ("[5, 3, 1, 2].reverse()", [2, 1, 3, 5]), ("[3, 1, 2].sort()", [1, 2, 3]),
    ("[1, 'a'].sort()", "list elements must have the same type"), ("lists.range(4)", [0, 1, 2, 3]),
    # cel-go's sets extension (ext/sets_test.go)
    ("sets.contains([1, 2, 3], [3, 2])", True), ("sets.contains([1, 2], [2, 3])", False),
    ("sets.contains([1], [1.0, 1u])", True), ("sets.contains([[1], [2, 3]], [[2, 3.0]])", True),
    ("sets.equivalent([1, 2, 1], [2, 1])", True), ("sets.equivalent([1], [1, 2])", False),
    ("sets.intersects([1], [1.0, 2])", True), ("sets.intersects([1], [])", False),
    # Kubernetes' regex library (pkg/cel/library/regex.go)
    ("'abc 123'.find('[0-9]+')", "123"), ("'abc 123'.find('xyz')", ""),
    ("'123 abc 456'.findAll('[0-9]+')", ["123", "456"]), ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
    ("'123 abc 456'.findAll('xyz')", []), ("'abc\\n'.find('c$')", ""),
    ("'abc'.find('(?=b)')", "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    # Kubernetes' URL library (pkg/cel/library/urls.go)
    ("url('https://example.com:80/').getHost()", "example.com:80"),
    ("url('https://[::1]:80/').getHost()", "[::1]:80"), ("url('https://[::1]:80/').getHostname()", "::1"),
    ("url('https://example.com:80/').getPort()", "80"), ("url('https://example.com/').getPort()", ""),
    ("url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
    ("url('https://example.com').getScheme()", "https"), ("url('/absolute-path').getHost()", ""),
    ("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", {"k1": ["a"], "k2": ["b", "c"]}),
    ("isURL('https://user:pass@example.com:80/path?query=val#fragment')", True),
    ("isURL('/absolute-path')", True), ("isURL('../relative-path')", False),
    ("isURL('https://a:b:c/')", False),
    ("url('https://a:b:c/')",
     'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host'),
    ("url('https://example.com/path?key with spaces=value with spaces').getQuery()",
     {"key with spaces": ["value with spaces"]}),
    ("url('https://example.com').getEscapedPath()", ""), ("url('https://[::1]/').getHost()", "[::1]"),
    ("url('example.com')",
     'URL parse error during conversion from string: parse "example.com": invalid URI for request'),
    # Kubernetes' quantity library (pkg/cel/library/quantity_test.go)
    ("isQuantity('20') && isQuantity('20M') && isQuantity('20Mi')", True),
    ("isQuantity('20Mo') || isQuantity('10Mm')", False),
    ("quantity('10Mo')", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("quantity('10Mm')", "unable to parse quantity's suffix"),
    ("quantity('200M') == quantity('0.2G') && quantity('0.2G') == quantity('200M')", True),
    ("quantity('2M') == quantity('0.002G') && quantity('2000k') == quantity('2M')", True),
    ("quantity('200M') == quantity('0.3G')", False),
    ("quantity('50M').isLessThan(quantity('50Mi'))", True), ("quantity('100M').isLessThan(quantity('50M'))", False),
    ("quantity('50Mi').isGreaterThan(quantity('50M'))", True),
    ("quantity('200M').compareTo(quantity('0.2G'))", 0), ("quantity('50M').compareTo(quantity('50Mi'))", -1),
    ("quantity('50k').add(quantity('20')) == quantity('50.02k')", True),
    ("quantity('50k').add(20).isLessThan(quantity('50020'))", False),
    ("quantity('50k').sub(quantity('20')) == quantity('49.98k')", True),
    ("quantity('50k').sub(20) == quantity('49980')", True),
    ("quantity('50k').add(20).sub(quantity('100k')).asInteger()", -49980),
    ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()", 20),
    ("quantity('9999999999999999999999999999999999999G').asInteger()", "cannot convert value to integer"),
    ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
    ("quantity('50').isInteger()", True), ("quantity('50.703k').asApproximateFloat()", 50703.0),
    ("quantity('-1').sign() == -1 && quantity('0').sign() == 0", True),
    ("[quantity('9999999999999999999999999999999999999')].all(x, "
     "x.add(quantity('1')).compareTo(x.add(quantity('2'))) == -1)", True),
    # Kubernetes' IP and CIDR libraries (pkg/cel/library/ip_test.go, cidr_test.go)
    ("ip('192.168.0.1') == ip('192.168.0.1')", True),
    ("ip('192.168.0.1.0')", 'IP Address "192.168.0.1.0" parse error during conversion from string: '
                            'ParseAddr("192.168.0.1.0"): IPv4 address too long'),
    ("isIP('192.168.0.1') && !isIP('192.168.0.1.0')", True),
    ("ip('192.168.00.1')", 'IP Address "192.168.00.1" parse error during conversion from string: '
                           'ParseAddr("192.168.00.1"): IPv4 field has octet with leading zero'),
    ("ip('192.168.0.256')", 'IP Address "192.168.0.256" parse error during conversion from string: '
                            'ParseAddr("192.168.0.256"): IPv4 field has value >255'),
    ("ip.isCanonical('127.0.0.1') && !ip.isCanonical('2001:DB8::68')", True),
    ("ip('192.168.0.1').family() == 4 && ip('2001:db8::68').family() == 6", True),
    ("ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified() && !ip('::1').isUnspecified()", True),
    ("ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('1.2.3.4').isLoopback()", True),
    ("ip('224.0.0.1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()", True),
    ("ip('ff02::1').isLinkLocalMulticast() && !ip('fd00::1').isLinkLocalMulticast()", True),
    ("ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()", True),
    ("ip('192.168.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()", True),
    ("ip('2001:db8::abcd').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()", True),
    ("ip('fe80::1%eth0')", 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ("ip('::ffff:192.168.0.1')", 'IPv4-mapped IPv6 address "::ffff:192.168.0.1" is not allowed'),
    ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", True),
    ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", False),
    ("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.1/32'))", True),
    ("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')", False),
    ("cidr('2001:db8::/32').containsIP('2001:db8::1') && !cidr('2001:db8::/32').containsIP('2001:dc8::1')", True),
    ("cidr('2001:db8::/32').containsCIDR('2001:db8::/33')", True),
    ("cidr('192.168.0.0/24').ip() == ip('192.168.0.0')", True),
    ("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", True),
    ("cidr('2001:db8:1::/32').masked() == cidr('2001:db8::/32')", True),
    ("cidr('192.168.0.0/24').prefixLength()", 24), ("isCIDR('192.168.0.0/24') && !isCIDR('192.168.0.0')", True),
    ("cidr('192.168.0.0/')", 'network address parse error during conversion from string: network address parse '
                             'error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after '
                             'slash: ""'),
    # Kubernetes' format library (pkg/cel/library/format_test.go)
    ("format.dns1123Label().validate('my-label-name')", OK),
    ("format.dns1123Subdomain().validate('apiextensions.k8s.io')", OK),
    ("format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')", OK),
    ("format.dns1123LabelPrefix().validate('my-label-prefix-')", OK),
    ("format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-')", OK),
    ("format.dns1035LabelPrefix().validate('my-label-prefix-')", OK),
    ("format.uri().validate('http://example.com')", OK),
    ("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')", OK),
    ("format.byte().validate('aGVsbG8=')", OK), ("format.date().validate('2021-01-01')", OK),
    ("format.datetime().validate('2021-01-01T00:00:00Z')", OK),
    ("format.dns1123Label().validate('contains a space').value()",
     ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
      "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ("format.byte().validate('aGVsbG8').value()", ["invalid base64"]),
    ("format.date().validate('2020-01-32').value()", ["invalid date"]),
    ("format.datetime().validate('2020-01-32T00:00:00Z').value()", ["invalid datetime"]),
    ("format.named('unknown').hasValue()", False),
    ("format.named('dns1123Label').value().validate('ok').hasValue()", False),
    ("format.labelValue().validate('my-cool-label-Value').hasValue()", False),
    # Kubernetes' semver library (pkg/cel/library/semver_test.go)
    ("isSemver('1.0.0') && !isSemver('v1.0.0') && isSemver('v1.0', true)", True),
    ("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3", True),
    ("semver('1.0.0').isLessThan(semver('1.0.1')) && semver('2.0.0').isGreaterThan(semver('1.99.99'))", True),
    ("semver('1.0.0-alpha').compareTo(semver('1.0.0'))", -1),
    ("semver('1.0.0-alpha.1').compareTo(semver('1.0.0-alpha.beta'))", -1),
    ("semver('1.0.0+build.1') == semver('1.0.0')", True),
    ("semver('01.01.01', true) == semver('1.1.1')", True),
    ("semver('1.01.0')", 'Minor number must not contain leading zeroes "01"'),
    ("semver('Three')", "No Major.Minor.Patch elements found"),
]


@pytest.mark.parametrize(("expression", "expected"), LIBRARY, ids=[case[0][:60] for case in LIBRARY])
def test_kubernetes_cel_library_functions(expression, expected):
    result = value_of(expression)
    if expected is OK:
        assert not result.has_value()
    else:
        assert result == expected and type(result) is type(expected)


def test_every_function_the_vendored_crds_call_is_defined_and_every_rule_compiles():
    from omerender.kube import cellib
    from omerender.kube.validation import pinned_crds
    seen: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations") or []:
                for key in ("rule", "messageExpression"):
                    if key in rule:
                        assert celrules._compile_problem(rule[key]) is None, rule[key]
                        seen.update(celrules._compiled(rule[key]).program.functions())
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    for document in pinned_crds().values():
        walk(document)
    assert "upperAscii" in seen and "size" in seen
    assert not cellib.unimplemented(seen)


def test_a_function_no_library_defines_is_an_error_naming_it_never_a_pass():
    [failure] = failures("self.name.isHostname() && self.size() > 0", {"name": "x"})
    assert failure == Failure("spec", "rule 'self.name.isHostname() && self.size() > 0' calls isHostname, which "
                                      "omerender's CEL libraries do not define; it cannot check this rule (a function "
                                      "of Kubernetes' CEL libraries not implemented, or a misspelled name)")


def test_a_namespaced_function_no_library_defines_is_named_with_its_namespace():
    assert failures("math.greatest([1, 2]) == 2 && sets.contains([1], [1])", 1) == [Failure(
        "spec", "rule 'math.greatest([1, 2]) == 2 && sets.contains([1], [1])' calls math.greatest, which omerender's "
                "CEL libraries do not define; it cannot check this rule (a function of Kubernetes' CEL libraries not "
                "implemented, or a misspelled name)")]


def test_omerender_s_own_stand_ins_are_not_functions_a_rule_may_call():
    assert failures("goDuration('1s') > duration('0s')", 1)[0].text == (
        "rule \"goDuration('1s') > duration('0s')\" calls goDuration, which Kubernetes' CEL libraries do not define; "
        "it cannot check this rule")


def test_syntax_the_evaluator_lacks_is_an_error_naming_it():
    assert failures("self.?x.orValue(1) == 1", {}) == [Failure(
        "spec", "rule compile error: Failed to parse expression 'self.?x.orValue(1) == 1': ERROR: <input>:1:5: "
                "unsupported syntax '.?'")]
    assert failures("self.all(k, v, v > 0)", {"a": 1}) == [Failure(
        "spec", "rule 'self.all(k, v, v > 0)' uses the two-variable comprehension all(key, value, ...) (Kubernetes "
                "1.32), which omerender's CEL evaluator does not support; it cannot check this rule")]


def test_self_is_the_node_s_value_and_the_rule_s_field_path_and_reason_place_the_message():
    rule = {"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min"}
    assert evaluate([rule], {"min": 1, "max": 2}, "spec.range") == []
    assert evaluate([rule], {"min": 3, "max": 2}, "spec.range") == [
        Failure("spec.range.min", "min must not exceed max")]
    forbidden = evaluate([{**rule, "reason": "FieldValueForbidden"}], {"min": 3, "max": 2}, "spec")
    assert forbidden[0].line("object") == "Forbidden: min must not exceed max"
    required = evaluate([{**rule, "reason": "FieldValueRequired"}], {"min": 3, "max": 2}, "spec")
    assert required[0].line("object") == "Required value: min must not exceed max"
    duplicate = evaluate([{**rule, "reason": "FieldValueDuplicate"}], {"min": 3, "max": 2}, "spec")
    assert duplicate[0].line("object") == 'Duplicate value: "object"'
    assert evaluate([{"rule": "self > 0"}], -1, "spec.size")[0].line("integer") == \
        'Invalid value: "integer": failed rule: self > 0'


def test_transition_rules_are_skipped_on_create_and_optional_old_self_is_an_empty_optional():
    assert failures("self == oldSelf", 1, message="immutable") == []
    assert failures("self != 'oldSelf'", "oldSelf") == [Failure("spec", "failed rule: self != 'oldSelf'")]
    assert failures("self.x == oldSelf.x", {"x": 1}, optionalOldSelf=False) == []
    assert failures("!oldSelf.hasValue()", 1, optionalOldSelf=True) == []
    assert failures("oldSelf.orValue(5) == self", 1, optionalOldSelf=True) == [
        Failure("spec", "failed rule: oldSelf.orValue(5) == self")]


def test_message_expression_gives_the_message_and_any_failure_of_it_falls_back_as_the_api_server_does():
    rule = {"rule": "self.size <= 8", "message": "too big"}
    big = {"size": 9}
    assert evaluate([{**rule, "messageExpression": "'size ' + string(self.size) + ' is over 8'"}], big, "spec") == [
        Failure("spec", "size 9 is over 8")]
    assert evaluate([{**rule, "messageExpression": "'  padded  '"}], big, "spec")[0].text == "padded"
    for broken in ("self.missing + 'x'", "1", "''", "'two\\nlines'", "'x'.repeat(3)", "'x' + ",
                   "'%s' + oldSelf", "'x' * 6000"):
        assert evaluate([{**rule, "messageExpression": broken}], big, "spec") == [Failure("spec", "too big")], broken
    long = "'" + "x" * 5121 + "'"
    assert evaluate([{**rule, "messageExpression": long}], big, "spec") == [Failure("spec", "too big")]
    assert evaluate([{"rule": "self.size <= 8", "messageExpression": "1"}], big, "spec") == [
        Failure("spec", "failed rule: self.size <= 8")]


def test_an_evaluation_error_is_reported_as_the_api_server_reports_it():
    assert failures("self.missing == 1", {}) == [
        Failure("spec", "no such key: missing evaluating rule: self.missing == 1")]
    assert failures("self.x / 0 == 1", {"x": 1}, message="no division") == [
        Failure("spec", "division by zero evaluating rule: no division")]
    assert failures("self.x + 9223372036854775807 > 0", {"x": 1}) == [
        Failure("spec", "integer overflow evaluating rule: self.x + 9223372036854775807 > 0")]
    assert failures("self.x + 'a' == 'b'", {"x": 1}) == [
        Failure("spec", "'no such overload': call arguments did not match a supported operator, function or macro "
                        "signature for rule: self.x + 'a' == 'b'")]
    assert failures("self.x.charAt(9) == 'a'", {"x": "abc"}) == [
        Failure("spec", "index out of range: 9 evaluating rule: self.x.charAt(9) == 'a'")]
    assert failures("self ==", 1)[0].text.startswith("rule compile error: ")


def test_an_expression_over_the_per_call_limit_is_reported_as_the_api_server_reports_it_and_stops_the_rules():
    value = {"items": list(range(2000))}
    expensive = "self.items.all(a, self.items.all(b, a + b >= 0))"
    found = evaluate([{"rule": expensive}, {"rule": "false", "message": "never run"}], value, "spec")
    assert found == [Failure("spec", "'operation cancelled: actual cost limit exceeded': no further validation rules "
                                     f"will be run due to call cost exceeds limit for rule: {expensive}")]
    assert evaluate([{"rule": "self.items.all(a, a >= 0)"}], value, "spec") == []


def test_the_object_s_budget_is_shared_by_its_rules_and_running_out_is_the_api_server_s_text():
    value = {"items": list(range(900))}
    # estimated (903 + 72)^2 + 72 (two nested comprehensions over 903 values and the rule's text), though || ends it
    # at once: 10 fit in 10,000,000
    rule = {"rule": "self.items.size() > 0 || self.items.all(a, self.items.all(b, b != a))"}
    with celrules.object_budget():
        first = [f for _ in range(13) for f in evaluate([rule], value, "spec")]
        later = evaluate([{"rule": "false"}], 1, "spec.other")
    assert first == [Failure("spec", celrules.OUT_OF_BUDGET)]
    assert later == []  # no further rule runs once the budget is spent
    assert evaluate([rule], value, "spec") == []  # outside an object, each call has a fresh budget


def test_message_expression_over_the_per_call_limit_stops_with_the_api_server_s_text():
    value = {"items": list(range(2000))}
    expression = "self.items.map(a, self.items.map(b, a)).size() > 0 ? 'big' : 'small'"
    assert evaluate([{"rule": "false", "messageExpression": expression}], value, "spec") == [
        Failure("spec", f'no further validation rules will be run due to call cost exceeds limit for '
                        f'messageExpression: "{expression}"')]


def test_find_and_find_all_refuse_a_pattern_that_backtracks_exponentially_in_python():
    for pattern in ("(a+)+$", "(a|aa)*b", "(x{1,3})+y"):
        result = value_of(f"'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.find('{pattern}')")
        assert "omerender does not run the pattern" in result
    assert value_of("'ab ab'.findAll('(ab)+')") == ["ab", "ab"]


def test_the_evaluator_is_loaded_without_the_packages_repl_and_an_error_prints_nothing(capfd):
    import subprocess
    import sys
    code = ("import sys; from omerender.kube import celrules; "
            "print(celrules.evaluate([{'rule': \"self.charAt(9) == 'a'\"}], 'abc', 'x')[0].text); "
            "print(sorted(m for m in ('typer', 'rich', 'prompt_toolkit', 'cel') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["index out of range: 9 evaluating rule: self.charAt(9) == 'a'", "[]"]
    assert done.stderr == ""


def test_size_counts_code_points_as_cel_does_not_utf8_bytes():
    rule = {"rule": "self.name.size() <= 5 && size(self.name) <= 5 && size(self.tags) == 1", "message": "long"}
    assert evaluate([rule], {"name": "héllo", "tags": ["é"]}, "spec") == []
    assert evaluate([rule], {"name": "héllos", "tags": ["é"]}, "spec") == [Failure("spec", "long")]
    assert evaluate([{"rule": "'size(é)'.size() == 7 && self.size() == 1"}], ["é"], "spec") == []
    assert evaluate([{"rule": "'é'.size() == 1"}], "ascii", "spec") == []
    assert celrules._rewritten("x.size() + size(y) + 'size(' + \"a\\\"size(\" + resize(z)", True) == \
        "x.codePointSize() + codePointSize(y) + 'size(' + \"a\\\"size(\" + resize(z)"


def test_lists_the_library_makes_are_charged_as_often_as_the_rule_may_visit_them():
    exceeded = ("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to "
                "call cost exceeds limit for rule: {}")
    for rule in ("[lists.range(2000)].all(r, r.all(x, r.all(y, x + y >= 0)))",
                 "lists.range(1000000).size() > 0",
                 "self.split('').all(x, self.split('').all(y, x != y || true))"):
        started = time.monotonic()
        assert failures(rule, "ab" * 2000) == [Failure("spec", exceeded.format(rule))], rule
        assert time.monotonic() - started < 2
    assert failures("lists.range(100).all(x, lists.range(100).all(y, x + y >= 0))", 1) == []
    assert failures("[1, 2, 3].all(x, [4, 5].all(y, x < y))", 1) == []


def test_a_literal_list_in_the_rule_counts_in_its_estimate():
    items = ", ".join(["1"] * 1000)
    rule = f"[{items}].all(a, [{items}].all(b, [{items}].all(c, a + b + c > 0)))"
    started = time.monotonic()
    assert failures(rule, 1)[0].text.startswith("'operation cancelled: actual cost limit exceeded'")
    assert time.monotonic() - started < 2


def test_the_documented_cost_limit_example(tmp_path):
    import sys
    from pathlib import Path
    from test_validate import WIDGET_CRD
    (tmp_path / "crds").mkdir()
    rule = "self.items.all(a, self.items.all(b, self.items.all(c, self.items.all(d, a + b + c + d >= 0))))"
    (tmp_path / "crds" / "widget.yaml").write_text(
        WIDGET_CRD.replace("rule: \"self.mode == 'fast' ? self.size <= 8 : true\"", f'rule: "{rule}"')
        .replace("size: {type: integer, minimum: 1}",
                 "size: {type: integer}\n                items: {type: array, items: {type: integer}}"))
    (tmp_path / "widgets.yaml").write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n"
                                           "  size: 1\n  items: [%s]\n" % ", ".join(["1"] * 200))
    import subprocess
    done = subprocess.run([sys.executable, "-m", "omerender", "validate", "widgets.yaml", "--schema-location", "crds"],
                          cwd=tmp_path, capture_output=True, text=True)
    documented = (Path(__file__).parents[1] / "docs/reference/validation.md").read_text()
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.rstrip("\n") in documented.splitlines()


def test_hostile_quantities_and_ranges_are_refused_at_once():
    started = time.monotonic()
    assert value_of("quantity('1e999999999')") == "omerender does not evaluate a quantity of 10^999999999"
    assert value_of("isQuantity('1e999999999')") is False
    assert value_of("lists.range(10000000).size()") == "lists.range(10000000) would build more than 1,000,000 items"
    assert time.monotonic() - started < 1


POLICY = """apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: chat
  namespace: serving
spec:
  targetRefs:
    - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: chat}
  healthCheck:
    active:
      type: HTTP
      http:
        path: /health
        method: post
        requestBody: {type: Text, text: ping}
  http2:
    connectionKeepalive: {interval: 10s, timeout: 5s}
"""


def test_the_shipped_crds_rules_with_kubernetes_functions_and_durations_on_their_nodes():
    from conftest import run_cli
    assert run_cli("validate", "-", input=POLICY).code == 0
    done = run_cli("validate", "-", input=POLICY.replace("method: post", "method: get").replace("timeout: 5s",
                                                                                                 "timeout: 30s"))
    assert (done.code, done.stdout) == (1, "")
    assert done.lines == [
        "error: <stdin>: BackendTrafficPolicy serving/chat: spec.healthCheck.active.http: Invalid value: \"object\": "
        "The "
        "requestBody field can only be set when method is POST or PUT.",
        "error: <stdin>: BackendTrafficPolicy serving/chat: spec.http2.connectionKeepalive: Invalid value: "
        "\"object\": timeout "
        "must be less than interval"]


def test_self_is_bound_per_node_items_and_map_values_included():
    from omerender.kube import crdschema
    schema = {"type": "object", "properties": {
        "ports": {"type": "array", "items": {
            "type": "object", "properties": {"port": {"type": "integer"}, "name": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "self.port > 1024", "messageExpression":
                                          "'port ' + string(self.port) + ' of ' + self.name + ' is privileged'"}]},
            "x-kubernetes-validations": [{"rule": "self.all(p, self.exists_one(q, q.name == p.name))",
                                          "message": "names must be unique", "reason": "FieldValueDuplicate"}]},
        "limits": {"type": "object", "additionalProperties": {
            "type": "string", "x-kubernetes-validations": [{"rule": "isQuantity(self)", "message": "not a quantity",
                                                            "reason": "FieldValueForbidden"}]}}}}
    value = {"ports": [{"port": 8080, "name": "a"}, {"port": 80, "name": "b"}, {"port": 9090, "name": "a"}],
             "limits": {"cpu": "2", "memory": "lots"}}
    found: list = []
    with celrules.object_budget():
        crdschema.check(value, schema, "spec", found)
    assert found == [("spec.ports[1]", 'Invalid value: "object": port 80 of b is privileged'),
                     ("spec.limits.memory", "Forbidden: not a quantity")]
    found = []
    crdschema.check({"ports": [{"port": 8080, "name": "a"}, {"port": 9090, "name": "a"}]}, schema, "spec", found)
    assert found == [("spec.ports", 'Duplicate value: "array"')]


def test_a_deeply_nested_rule_is_estimated_without_computing_a_huge_power():
    rule = "self" + ".all(a, a.all(b, true))" * 1 + "".join(".map(x, x" for _ in range(30)) + ")" * 30 + " == []"
    started = time.monotonic()
    assert celrules.nesting(rule) >= 30
    assert failures(rule, [[1]])[0].text.startswith("'operation cancelled: actual cost limit exceeded'")
    assert time.monotonic() - started < 1


def test_a_whole_number_of_a_number_field_is_a_double_to_the_rules_as_in_the_api_server():
    schema = {"type": "object", "properties": {"ratio": {"type": "number"}, "count": {"type": "integer"},
                                               "weights": {"type": "array", "items": {"type": "number"}}}}
    rules = [{"rule": "self.ratio + 0.5 == 1.5 && self.weights.all(w, w * 0.5 >= 0.0) && self.count + 1 == 3"}]
    value = {"ratio": 1, "count": 2, "weights": [1, 2.5]}
    assert evaluate(rules, value, "spec", schema) == []
    assert value == {"ratio": 1, "count": 2, "weights": [1, 2.5]}
    assert evaluate(rules, value, "spec")[0].text.startswith("'no such overload'")
