// The form of a subdomain, for adding one and for changing one (API guide "Subdomains"). Hints
// only (the kinds, the PHP versions of the plan, the redirect rules); the API checks every rule
// and its errors appear at the field their source.pointer names (`/data/attributes/redirect/target`
// → the target field).
import { useState } from 'preact/hooks';
import { CheckField } from '../components/check-field';
import { FormErrors } from '../components/errors';
import { SelectField, TextField } from '../components/field';
import { useSubmit } from '../components/use-submit';
import { useI18n, type MessageKey } from '../i18n';

export const KINDS = ['webspace', 'redirect', 'email'] as const;
export type Kind = (typeof KINDS)[number];
const FIELDS = [
  'subdomain_type', 'domain', 'subdomain', 'description',
  'webspace.path', 'webspace.php_version', 'webspace.redirect_to_https',
  'redirect.target', 'redirect.dynamic', 'redirect.redirect_to_https',
] as const;

export interface SubdomainInput {
  subdomain_type: Kind;
  domain: string;
  subdomain: string;
  description: string;
  path: string;
  /** '' is the package default (null). */
  php_version: string;
  webspace_https: boolean;
  target: string;
  dynamic: boolean;
  redirect_https: boolean;
}

export const EMPTY_SUBDOMAIN: SubdomainInput = {
  subdomain_type: 'webspace', domain: '', subdomain: '', description: '', path: '', php_version: '', webspace_https: false, target: '', dynamic: false, redirect_https: false,
};

/** The settings group of the chosen kind, as POST and PATCH take it (the other kind's group is left out). */
export function kindAttributes(v: SubdomainInput) {
  if (v.subdomain_type === 'webspace') return { webspace: { path: v.path, php_version: v.php_version || null, redirect_to_https: v.webspace_https } };
  if (v.subdomain_type === 'redirect') return { redirect: { target: v.target, dynamic: v.dynamic, redirect_to_https: v.redirect_https } };
  return {};
}

export function SubdomainForm(props: {
  idPrefix: string;
  /** Adding: the package's presence domains to choose from. Changing: absent (name and domain stay). */
  domains?: string[];
  /** The kinds offered (changing: no way back to e-mail only). */
  kinds: readonly Kind[];
  phpVersions: string[];
  initial: SubdomainInput;
  submitLabel: string;
  /** Resolves when the API accepted the change; rejects with its ApiError. */
  onSubmit(values: SubdomainInput): Promise<void>;
  resetAfter?: boolean;
}) {
  const { t } = useI18n();
  const [values, setValues] = useState<SubdomainInput>(props.initial);
  const set = <K extends keyof SubdomainInput>(key: K) => (value: SubdomainInput[K]) => setValues((v) => ({ ...v, [key]: value }));
  const id = (field: string) => `${props.idPrefix}-${field.replace('.', '-')}`;
  const { busy, byField: fieldErrors, form: formErrors, submitWith } = useSubmit(FIELDS, id);
  const adding = props.domains !== undefined;
  const php = props.phpVersions.includes(values.php_version) || !values.php_version ? props.phpVersions : [values.php_version, ...props.phpVersions];
  const submit = submitWith(async () => {
    await props.onSubmit(values);
    if (props.resetAfter) setValues((v) => ({ ...props.initial, domain: v.domain, subdomain_type: v.subdomain_type }));
  });

  return (
    <form onSubmit={submit} noValidate class="subdomain-form">
      <FormErrors errors={formErrors} />
      <div class="grid">
        {adding && (
          <>
            <TextField
              id={id('subdomain')}
              label={t('sub.subdomain')}
              hint={t('sub.subdomain.hint', { domain: values.domain })}
              value={values.subdomain}
              onInput={set('subdomain')}
              errors={fieldErrors.subdomain}
              required
            />
            <SelectField
              id={id('domain')}
              label={t('sub.domain')}
              value={values.domain}
              onInput={set('domain')}
              options={props.domains!.map((d) => ({ value: d, label: d }))}
              errors={fieldErrors.domain}
            />
          </>
        )}
        <SelectField
          id={id('subdomain_type')}
          label={t('sub.kind')}
          hint={adding ? t('sub.kind.hint') : t('sub.kind.change.hint')}
          value={values.subdomain_type}
          onInput={(v) => set('subdomain_type')(v as Kind)}
          options={props.kinds.map((k) => ({ value: k, label: t(`sub.kind.${k}` as MessageKey) }))}
          errors={fieldErrors.subdomain_type}
        />
        <TextField id={id('description')} label={t('web.description')} hint={t('web.description.hint')} value={values.description} onInput={set('description')} errors={fieldErrors.description} />
      </div>
      {values.subdomain_type === 'webspace' && (
        <fieldset>
          <legend>{t('sub.kind.webspace')}</legend>
          <div class="grid">
            <TextField id={id('webspace.path')} label={t('sub.path')} hint={t('sub.path.hint')} value={values.path} onInput={set('path')} errors={fieldErrors['webspace.path']} required />
            <SelectField
              id={id('webspace.php_version')}
              label={t('sub.php')}
              hint={t('sub.php.hint')}
              value={values.php_version}
              onInput={set('php_version')}
              options={[{ value: '', label: t('sub.php.default') }, ...php.map((v) => ({ value: v, label: t('sub.phpOf', { version: v }) }))]}
              errors={fieldErrors['webspace.php_version']}
            />
          </div>
          <CheckField id={id('webspace.redirect_to_https')} label={t('sub.https')} hint={t('sub.https.hint')} checked={values.webspace_https} onChange={set('webspace_https')} errors={fieldErrors['webspace.redirect_to_https']} />
        </fieldset>
      )}
      {values.subdomain_type === 'redirect' && (
        <fieldset>
          <legend>{t('sub.kind.redirect')}</legend>
          <TextField id={id('redirect.target')} label={t('sub.target')} hint={t('sub.target.hint')} type="text" inputMode="text" value={values.target} onInput={set('target')} errors={fieldErrors['redirect.target']} required />
          <CheckField id={id('redirect.dynamic')} label={t('sub.dynamic')} hint={t('sub.dynamic.hint')} checked={values.dynamic} onChange={set('dynamic')} errors={fieldErrors['redirect.dynamic']} />
          <CheckField id={id('redirect.redirect_to_https')} label={t('sub.https')} hint={t('sub.https.hint')} checked={values.redirect_https} onChange={set('redirect_https')} errors={fieldErrors['redirect.redirect_to_https']} />
        </fieldset>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {props.submitLabel}
        </button>
      </div>
    </form>
  );
}
